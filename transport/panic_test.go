package transport

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/edgebench/edgebench/internal/testenv"
)

// TestHandlerPanicDropsTheMessage: a handler that panics on a message
// loses that message only; it is logged and counted, and the next
// messages are handled (a hostile payload must not stop a collector).
func TestHandlerPanicDropsTheMessage(t *testing.T) {
	b := testenv.StartBroker(t)
	core, logs := observer.New(zapcore.InfoLevel)
	c, err := Dial(ClientConfig{Broker: b.URL(), ClientID: "panicky", RetryInterval: 100 * time.Millisecond},
		Options{Log: zap.New(core), Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 8)
	if err := c.Subscribe("x/#", 1, func(_ context.Context, topic string, b []byte) {
		if string(b) == "boom" {
			var m map[string]int
			//lint:ignore SA5000 the handler panics on purpose
			m["nil map"]++
		}
		got <- string(b)
	}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"boom", "after", "boom", "again"} {
		if err := c.Publish(ctx, "x/y", 1, false, []byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	// paho hands messages over in goroutines of their own
	// (SetOrderMatters(false)): the two may come in either order.
	var handled []string
	for len(handled) < 2 {
		select {
		case s := <-got:
			handled = append(handled, s)
		case <-ctx.Done():
			t.Fatalf("handled %q, want after and again: the worker stopped", handled)
		}
	}
	if slices.Sort(handled); !slices.Equal(handled, []string{"after", "again"}) {
		t.Fatalf("handled %q, want after and again", handled)
	}
	if n := c.Panics(); n != 2 {
		t.Errorf("%d panics counted, want 2", n)
	}
	if n := logs.FilterMessage("message handler panicked, message dropped").Len(); n != 2 {
		t.Errorf("%d panics logged, want 2", n)
	}
}
