package alerts

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/internal/testenv"
)

// TestRaiseNeverWaits: with a broker that does not answer, 2,000 alerts
// raised at once cost no goroutine each and no wait: one is in the
// publisher's hands, publishQueue wait, the others are dropped and
// counted. Once the broker answers, the waiting ones are published in
// the order they were raised.
func TestRaiseNeverWaits(t *testing.T) {
	stuck := make(chan struct{})
	var mu sync.Mutex
	var got []string
	publish := func(ctx context.Context, topic string, retained bool, body []byte) error {
		select { // held until the test lets go, or its end cancels the run
		case <-stuck:
		case <-ctx.Done():
			return ctx.Err()
		}
		var a Alert
		if err := json.Unmarshal(body, &a); err != nil {
			return err
		}
		mu.Lock()
		got = append(got, a.Subject)
		mu.Unlock()
		return nil
	}
	al := New(Config{}, storetest.OpenSQLite(t), publish, "edgebench/v1", zap.NewNop())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		al.Run(ctx)
	}()
	defer func() { cancel(); <-done }()

	base := runtime.NumGoroutine()
	start := time.Now()
	const n = 2000
	peak := 0
	for i := range n {
		al.Raise(&Alert{Kind: KindMissed, Fleet: "lab", Subject: fmt.Sprintf("s-%04d", i), At: time.Now(), Summary: "test"})
		peak = max(peak, runtime.NumGoroutine())
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("raising %d alerts took %v", n, d)
	}
	if peak > base+5 {
		t.Errorf("%d goroutines while raising %d alerts, %d before: a goroutine per alert", peak, n, base)
	}
	testenv.Until(t, "the publisher holding the first", func() bool { return al.Stats().Unpublished == n-publishQueue-1 })
	close(stuck)
	testenv.Until(t, "the waiting alerts published", func() bool { return al.Stats().Published == publishQueue+1 })
	mu.Lock()
	defer mu.Unlock()
	for i, s := range got {
		if want := fmt.Sprintf("s-%04d", i); s != want {
			t.Fatalf("publication %d is %s, want %s: not in the order raised", i, s, want)
		}
	}
}
