package wire_test

import (
	"fmt"
	"time"

	"github.com/edgebench/edgebench/wire"
)

func ExampleTopics() {
	t := wire.Topics{Prefix: wire.DefaultPrefix}
	topic, _ := t.Topic("lab", "pi4-07", wire.TopicResult)
	a, _ := t.Parse(topic)
	filter, _ := t.Filter("+", "+", wire.TopicResult, "ingest")
	_, err := t.Topic("lab", "Pi4", wire.TopicCmd)
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
	cmd := &wire.Command{V: wire.SchemaVersion, ID: wire.NewID(), Kind: wire.KindInfo,
		IssuedAt: time.Now(), ExpiresAt: time.Now().Add(time.Minute)}
	b, _ := cmd.MarshalMsg(nil)
	got, err := wire.DecodeCommand(b)
	fmt.Println(got.Kind, err)
	_, err = wire.DecodeCommand([]byte{0x81, 0xa2, 's', 'p', 0xdd, 0xff, 0xff, 0xff})
	fmt.Println(err != nil)
	// Output:
	// info <nil>
	// true
}
