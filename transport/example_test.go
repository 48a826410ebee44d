package transport_test

import (
	"context"
	"log"
	"time"

	"github.com/edgebench/edgebench/spool"
	"github.com/edgebench/edgebench/transport"
	"github.com/edgebench/edgebench/wire"
)

// A device spools and publishes a result, and waits for the collector's
// ack; what is not acknowledged goes out again on the next connect.
func ExampleClient_PublishResult() {
	sp, err := spool.Open("/var/lib/edgebench/spool", spool.Limits{})
	if err != nil {
		log.Fatal(err)
	}
	c, err := transport.Dial(transport.ClientConfig{
		Broker: "mqtts://collector.lan:8883", CAFile: "/etc/edgebench/ca.pem",
		Fleet: "lab", Device: "pi4-07",
	}, transport.Options{Spool: sp, Birth: &wire.Status{BootID: "…"}})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res := &wire.Result{CreatedAt: time.Now(), Outcome: wire.StateSucceeded}
	if err := c.PublishResult(ctx, res); err != nil {
		log.Fatal(err) // not even spooled
	}
	if err := c.WaitAck(ctx, res.ID); err != nil {
		log.Printf("result %s stays spooled: %v", res.ID, err)
	}
}

// A collector stores results and acks each once stored.
func ExampleNewSubscriber() {
	c, err := transport.Dial(transport.ClientConfig{Broker: "tcp://127.0.0.1:1883", ClientID: "collector-1"},
		transport.Options{Workers: 4})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	_, err = transport.NewSubscriber(c, transport.SubscriberConfig{
		Group: "ingest", // several collectors share the load
		Handler: func(ctx context.Context, from wire.Addr, r *wire.Result, _ []byte) error {
			return nil // insert into the store, idempotent by r.ID
		},
	})
	if err != nil {
		log.Fatal(err)
	}
}
