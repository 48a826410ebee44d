package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/wire"
)

// TestCommandSentTo: the store knows every target of a command, in both
// engines: a device by name, each device of a selection (one id sent
// several times), a whole fleet; not another fleet, not another device.
func TestCommandSentTo(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s := e.Open(t)
		now := time.Now()
		add := func(id, fleet, target string) {
			cmd := &wire.Command{V: 1, ID: id, IssuedAt: now, ExpiresAt: now.Add(time.Minute), Kind: wire.KindLoadTest}
			if err := s.AddCommand(ctx, fleet, target, cmd, []byte{0x80}); err != nil {
				t.Fatal(err)
			}
		}
		one, sel, all := wire.NewID(), wire.NewID(), wire.NewID()
		add(one, "lab", "pi-1")
		add(sel, "lab", "pi-1")
		add(sel, "lab", "pi-2")
		add(sel, "far", "pi-9")
		add(all, "lab", wire.AllDevices)
		for _, c := range []struct {
			id, fleet, device string
			want              bool
		}{
			{one, "lab", "pi-1", true}, {one, "lab", "pi-2", false}, {one, "far", "pi-1", false},
			{sel, "lab", "pi-2", true}, {sel, "far", "pi-9", true}, {sel, "far", "pi-2", false},
			{all, "lab", "pi-7", true}, {all, "far", "pi-9", false}, {wire.NewID(), "lab", "pi-1", false},
		} {
			got, err := s.CommandSentTo(ctx, c.id, c.fleet, c.device)
			if err != nil || got != c.want {
				t.Errorf("%s to %s/%s: %v %v, want %v", c.id, c.fleet, c.device, got, err, c.want)
			}
		}
	})
}
