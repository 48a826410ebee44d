package transport_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/edgebench/edgebench/transport"
)

// A device spools and publishes a result, and waits for the collector's
// ack; what is not acknowledged goes out again on the next connect.
func ExampleClient_PublishResult() {
	sp, err := transport.OpenSpool("/var/lib/edgebench/spool", transport.SpoolLimits{})
	if err != nil {
		log.Fatal(err)
	}
	c, err := transport.Dial(transport.ClientConfig{
		Broker: "mqtts://collector.lan:8883", CAFile: "/etc/edgebench/ca.pem",
		Fleet: "lab", Device: "pi4-07",
	}, transport.Options{Spool: sp, Birth: &transport.Status{BootID: "…"}})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res := &transport.Result{CreatedAt: time.Now(), Outcome: transport.StateSucceeded}
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
		Handler: func(ctx context.Context, from transport.Addr, r *transport.Result, _ []byte) error {
			return nil // insert into the store, idempotent by r.ID
		},
	})
	if err != nil {
		log.Fatal(err)
	}
}

func ExampleTopics() {
	t := transport.Topics{Prefix: transport.DefaultPrefix}
	topic, _ := t.Topic("lab", "pi4-07", transport.TopicResult)
	a, _ := t.Parse(topic)
	filter, _ := t.Filter("+", "+", transport.TopicResult, "ingest")
	_, err := t.Topic("lab", "Pi4", transport.TopicCmd)
	fmt.Println(topic)
	fmt.Println(a.Fleet, a.Device, a.Kind)
	fmt.Println(filter)
	fmt.Println(err)
	// Output:
	// edgebench/v1/lab/pi4-07/result
	// lab pi4-07 result
	// $share/ingest/edgebench/v1/+/+/result
	// device: id "Pi4": byte 'P' not in [a-z0-9._-]: invalid topic
}

func ExampleDecodeCommand() {
	cmd := &transport.Command{V: transport.SchemaVersion, ID: transport.NewID(), Kind: transport.KindInfo,
		IssuedAt: time.Now(), ExpiresAt: time.Now().Add(time.Minute)}
	b, _ := cmd.MarshalMsg(nil)
	got, err := transport.DecodeCommand(b)
	fmt.Println(got.Kind, err)
	_, err = transport.DecodeCommand([]byte{0x81, 0xa2, 's', 'p', 0xdd, 0xff, 0xff, 0xff})
	fmt.Println(err != nil)
	// Output:
	// info <nil>
	// true
}
