// Package transport owns edgebench's wire: the msgpack schema of every
// message (schema.go, generated code in schema_gen.go), the MQTT topics,
// the MQTT client a device or collector connects with, and the on-disk
// spool that keeps results until the collector acknowledges them.
//
// A device dials the broker with a Client, which publishes a retained
// birth Status and sets the matching Last Will, restores its
// subscriptions on every connect and replays the spool:
//
//	sp, err := transport.OpenSpool(dir, transport.SpoolLimits{})
//	c, err := transport.Dial(cfg, transport.Options{Spool: sp, Birth: &transport.Status{BootID: id}})
//	defer c.Close()
//	err = c.PublishResult(ctx, res) // spooled, then published at QoS 1
//	err = c.WaitAck(ctx, res.ID)    // the collector has stored it
//
// A collector receives results through a Subscriber, which acknowledges a
// result only after its handler has returned nil.
//
// Decoders (DecodeResult, DecodeCommand, ...) check a size cap, the shape
// of the msgpack and element limits before they allocate, and never panic
// on hostile input.
package transport
