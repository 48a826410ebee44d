// Command eventflood is issue 31's event attack, for bench/event-flood.sh:
// a device with a valid account (and the default quota) publishes -n
// command events, each with a reason of -pad bytes, on made-up command
// ids (no command was ever sent to it), as fast as the broker takes them.
// Events are not acked, so it prints what it published and how long that
// took; the script reads what the collector stored.
//
//	eventflood -broker 127.0.0.1:18851 -n 1000 -pad 204800
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/edgebench/edgebench/spool"
	"github.com/edgebench/edgebench/transport"
	"github.com/edgebench/edgebench/wire"
)

func main() {
	broker := flag.String("broker", "127.0.0.1:18851", "the collector's broker")
	n := flag.Int("n", 1000, "events the device publishes")
	pad := flag.Int("pad", 200<<10, "bytes of each event's reason")
	flag.Parse()
	if err := run(*broker, *n, *pad); err != nil {
		fmt.Fprintln(os.Stderr, "eventflood:", err)
		os.Exit(1)
	}
}

func run(broker string, n, pad int) error {
	dir, err := os.MkdirTemp("", "eventflood-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	sp, err := spool.Open(dir, spool.Limits{MaxCount: 10, MaxBytes: 1 << 20})
	if err != nil {
		return err
	}
	c, err := transport.Dial(transport.ClientConfig{Broker: "tcp://" + broker, Username: "pi-1", Password: "one", Fleet: "lab", Device: "pi-1"},
		transport.Options{Spool: sp})
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.WaitConnected(ctx); err != nil {
		return err
	}
	reason := strings.Repeat("x", pad)
	topic := wire.DefaultPrefix + "/lab/pi-1/event"
	start := time.Now()
	size := 0
	for i := range n {
		ev := &wire.Event{V: wire.SchemaVersion, CommandID: wire.NewID(), Seq: uint32(i), State: wire.StateRejected,
			Reason: reason, At: time.Now().UTC()}
		b, err := ev.MarshalMsg(nil)
		if err != nil {
			return err
		}
		size = len(b)
		if err := c.Publish(context.Background(), topic, 1, false, b); err != nil {
			return err
		}
	}
	fmt.Printf("flood: %d events of %d bytes on made-up command ids published in %v\n", n, size, time.Since(start).Round(time.Millisecond))
	return nil
}
