// Package transport carries edgebench's messages (package wire) over
// MQTT: the client a device or a collector connects with, and the
// collector's side of result delivery.
//
// A Client is a connection that survives the broker: paho reconnects with
// a stable client id and a persistent session, and on every connect the
// client restores its subscriptions, then does what its Options ask of a
// device or a collector.
//
// A device dials the broker with a Client, which publishes a retained
// birth Status and sets the matching Last Will, restores its
// subscriptions on every connect and replays the spool:
//
//	sp, err := spool.Open(dir, spool.Limits{})
//	c, err := transport.Dial(cfg, transport.Options{Spool: sp, Birth: &wire.Status{BootID: id}})
//	defer c.Close()
//	err = c.PublishResult(ctx, res) // spooled, then published at QoS 1
//	err = c.WaitAck(ctx, res.ID)    // the collector has stored it
//
// A collector receives results through a Subscriber, which acknowledges a
// result only after its handler has returned nil.
package transport
