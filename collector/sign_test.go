package collector

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/store/scheduledb"
	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/sign"
	"github.com/edgebench/edgebench/wire"
)

// TestTriggerSignsForEachTarget: with a signing key the collector signs
// every command for the topic it sends it on, so what pi-1 receives does
// not verify for pi-2, nor a device's command for the fleet's _all topic.
func TestTriggerSignsForEachTarget(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	key := bytes.Repeat([]byte{0x42}, 32)
	signer, _ := sign.NewHMACSigner(key)
	verifier, _ := sign.NewHMACVerifier(key)
	listen := testenv.FreeAddr(t)
	col := startCollector(t, Config{DB: t.TempDir() + "/c.db", Listen: listen, Accounts: testAccounts(), Signer: signer})
	defer col.Close()
	got := map[string]chan *wire.Command{}
	for _, id := range []string{"pi-1", "pi-2"} {
		d := device(t, "tcp://"+listen, "lab", id, map[string]string{"pi-1": "one", "pi-2": "two"}[id])
		defer d.Close()
		ch := make(chan *wire.Command, 4)
		got[id] = ch
		if err := d.SubscribeCommands(func(_ context.Context, c *wire.Command) { ch <- c }); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Until(t, "both devices known", func() bool {
		devs, _ := col.Store().Devices(ctx)
		return len(devs) == 2
	})
	verifies := func(c *wire.Command, fleet, device string) bool {
		msg, err := c.SigningBytes(fleet, device)
		return err == nil && verifier.Verify(msg, c.Sig) == nil
	}
	receive := func(id string) *wire.Command {
		select {
		case c := <-got[id]:
			return c
		case <-ctx.Done():
			t.Fatalf("%s got no command", id)
			return nil
		}
	}
	spec := wire.LoadTestSpec{URL: "http://127.0.0.1:8080/", Connections: 2, DurationMS: 1000}
	if _, err := col.Trigger(ctx, scheduledb.TriggerRequest{Select: map[string]string{"site": "attic"}, Spec: spec}); err != nil {
		t.Fatal(err)
	}
	c1, c2 := receive("pi-1"), receive("pi-2")
	if c1.ID != c2.ID {
		t.Fatalf("one trigger, two command ids: %s %s", c1.ID, c2.ID)
	}
	if !verifies(c1, "lab", "pi-1") || !verifies(c2, "lab", "pi-2") {
		t.Errorf("a device's command does not verify for it")
	}
	if verifies(c1, "lab", "pi-2") || verifies(c2, "lab", "pi-1") || verifies(c1, "lab", wire.AllDevices) || verifies(c1, "lab2", "pi-1") {
		t.Errorf("a command verifies for a target it was not sent to")
	}
	if _, err := col.Trigger(ctx, scheduledb.TriggerRequest{Fleet: "lab", Spec: spec}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"pi-1", "pi-2"} {
		c := receive(id)
		if !verifies(c, "lab", wire.AllDevices) || verifies(c, "lab", id) {
			t.Errorf("%s: the fleet's command is not signed for lab/_all alone", id)
		}
	}
}
