package broker

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	mqtt "github.com/mochi-mqtt/server/v2"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/edgebench/edgebench/internal/testenv"
)

// TestLoginGate: past the cap of connections waiting for their login the
// next ones are closed at once; one that sends nothing is closed when its
// silent time is up, one that sends a byte when its login time is; a
// CONNECT announcing more than 16 KiB is refused; a device that logs in
// leaves the gate. Each is logged.
func TestLoginGate(t *testing.T) {
	listen := testenv.FreeAddr(t)
	logs := startObserved(t, listen, testAccounts(t), Limits{Pending: 3, LoginWait: 2 * time.Second, Silent: time.Second})
	dial := func() net.Conn {
		c, err := net.Dial("tcp", listen)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	// closed reports whether the server closed c within d.
	closed := func(c net.Conn, d time.Duration) bool {
		c.SetReadDeadline(time.Now().Add(d))
		_, err := c.Read(make([]byte, 1))
		var ne net.Error
		return !(errors.As(err, &ne) && ne.Timeout())
	}
	// A device that logs in leaves the gate: these two hold no place.
	for _, id := range []string{"pi-1", "pi-2"} {
		d, err := testenv.MQTTClient("tcp://"+listen, "edgebench-lab-"+id, id, map[string]string{"pi-1": "one", "pi-2": "two"}[id])
		if err != nil {
			t.Fatal(err)
		}
		defer d.Disconnect(0)
	}
	idle := []net.Conn{dial(), dial(), dial()}
	// Wait until the gate has taken the three (the server reads nothing
	// from them and they count once accepted): the fourth is closed.
	var fourth net.Conn
	testenv.Until(t, "a fourth connection refused", func() bool {
		fourth = dial()
		return closed(fourth, 200*time.Millisecond)
	})
	if closed(idle[0], 100*time.Millisecond) {
		t.Fatal("an idle connection was closed before its time was up")
	}
	for _, c := range idle {
		if !closed(c, 10*time.Second) {
			t.Error("an idle connection still open after its time was up")
		}
	}
	// The gate is empty again: a CONNECT announcing 20 KiB is refused at
	// its header.
	big := dial()
	big.Write([]byte{0x10, 0x80, 0xa0, 0x01}) // 20,480 bytes
	if !closed(big, 900*time.Millisecond) {
		t.Error("a CONNECT announcing 20 KiB was not refused")
	}
	// One byte, then nothing: closed when its login time is up, not at
	// its silent time.
	one := dial()
	start := time.Now()
	one.Write([]byte{0x10})
	if !closed(one, 5*time.Second) {
		t.Error("a connection that sent one byte still open after its time was up")
	} else if d := time.Since(start); d < 1500*time.Millisecond {
		t.Errorf("a connection that sent one byte closed after %s, before its login time", d)
	}
	for _, want := range []string{"connection closed: 3 others have not logged in yet", "connection closed: nothing sent within 1s", "connection closed: no login within 2s",
		"connection closed: CONNECT larger than 16384 bytes"} {
		if logs.FilterField(zap.String("reason", want)).Len() == 0 {
			t.Errorf("not logged: %s", want)
		}
	}
}

// TestConnectHeader follows the remaining length across reads, and the
// packet's bytes up to the end of the CONNECT.
func TestConnectHeader(t *testing.T) {
	for _, c := range []struct {
		in   []byte
		fail bool
	}{
		{[]byte{0x10, 0x0c}, false},
		{[]byte{0x10, 0x80, 0x80, 0x01}, false}, // 16,384: the cap
		{[]byte{0x10, 0x81, 0x80, 0x01}, true},  // 16,385
		{[]byte{0x10, 0xff, 0xff, 0xff, 0x7f}, true},
		{[]byte{0x10, 0x0c, 0xff, 0xff, 0xff}, false}, // the packet's own bytes after the header
	} {
		for split := range len(c.in) + 1 { // the same bytes in two reads
			var h connectHeader
			err := h.feed(c.in[:split])
			if err == nil {
				err = h.feed(c.in[split:])
			}
			if (err != nil) != c.fail {
				t.Errorf("% x split at %d: %v", c.in, split, err)
			}
		}
	}
	var h connectHeader
	for i, b := range []byte{0x10, 0x83, 0x01, 1, 2} { // 131 bytes announced
		h.feed([]byte{b})
		if h.complete() {
			t.Fatalf("complete after %d bytes", i+1)
		}
	}
	h.feed(make([]byte, 128))
	if h.complete() {
		t.Fatal("complete one byte short")
	}
	h.feed([]byte{0})
	if !h.complete() {
		t.Error("not complete after the 131 bytes")
	}
}

// TestWillCheckedWhenSent: a Will the ACL does not allow that got past
// CONNECT anyway is not sent where it asked: OnWill sends it, empty and
// unretained, to a topic no device can read.
func TestWillCheckedWhenSent(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	r := newRefusals(zap.New(core), time.Minute, nil)
	defer r.stop()
	h := newACLHook(testAccounts(t), prefix, r)
	cl := &mqtt.Client{ID: "edgebench-lab-pi-2"}
	cl.Properties.Username = []byte("pi-2")
	for _, topic := range []string{prefix + "/lab/_all/cmd", prefix + "/lab/pi-1/status", prefix + "/lab/pi-1/ack"} {
		w, err := h.OnWill(cl, mqtt.Will{TopicName: topic, Payload: []byte("forged"), Retain: true, Qos: 1})
		if err != nil || w.TopicName != refusedWill || len(w.Payload) != 0 || w.Retain {
			t.Errorf("Will on %s sent as %+v, %v", topic, w, err)
		}
	}
	own := mqtt.Will{TopicName: prefix + "/lab/pi-2/status", Payload: []byte("lost"), Retain: true, Qos: 1}
	if w, err := h.OnWill(cl, own); err != nil || !bytes.Equal(w.Payload, own.Payload) || w.TopicName != own.TopicName || !w.Retain {
		t.Errorf("the device's own Will sent as %+v, %v", w, err)
	}
	if n := logs.FilterMessage("broker refused a client").Len(); n != 1 {
		t.Errorf("%d lines logged, want 1 (then counted)", n)
	}
}

// TestRefusalsBounded: however many users and reasons, a period logs at
// most maxRefusalKeys first lines and one line for each of them repeated,
// plus one for the rest.
func TestRefusalsBounded(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	var counted atomic.Int64
	r := newRefusals(zap.New(core), time.Hour, &counted)
	for i := range 10_000 {
		r.note("c", fmt.Sprintf("user-%d", i%1000), "127.0.0.1:1", "unknown user")
	}
	if n := logs.Len(); n != maxRefusalKeys {
		t.Errorf("%d lines during the period, want %d", n, maxRefusalKeys)
	}
	r.stop()
	r.note("c", "late", "127.0.0.1:1", "unknown user")
	if n := counted.Load(); n != 10_001 {
		t.Errorf("%d refusals counted, want 10001: every one, logged or not", n)
	}
	if n := logs.Len(); n != 2*maxRefusalKeys+1 {
		t.Errorf("%d lines in all, want %d", n, 2*maxRefusalKeys+1)
	}
	rest := logs.FilterMessage("broker refused more clients, too many users and reasons to list").All()
	if len(rest) != 1 || rest[0].ContextMap()["times"] != int64(10_000-maxRefusalKeys*10) {
		t.Errorf("the rest: %v", rest)
	}
	if s := logs.All()[0].ContextMap(); s["user"] != "user-0" || s["reason"] != "unknown user" {
		t.Errorf("first line %v", s)
	}
}
