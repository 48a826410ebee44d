// Package transport carries edgebench's messages (package wire) over
// MQTT: the client a device or a collector connects with, and the
// collector's side of result delivery.
//
// A Client is a connection that survives the broker: paho reconnects with
// a stable client id and a persistent session, and on every connect the
// client restores its subscriptions, then does what its Options ask of a
// device or a collector. Its files, by job:
//
//   - config.go: what a Client is told: ClientConfig (broker, login, TLS,
//     topics, timeouts) and Options (what it does besides connecting).
//   - client.go: the connection: Dial, reconnects, subscriptions and the
//     bounded queue of messages to the handlers, publish, the work after
//     each connect (restore), Close.
//   - conn.go: the network connection under paho, read through a cap on
//     the size of a packet.
//   - presence.go: a device's presence: the retained birth and the Last
//     Will of each connection, offline at Close, heartbeats.
//   - commands.go: commands, published by the collector, subscribed to by
//     a device.
//   - events.go: command events, kept in order in an outbox while the
//     broker is away.
//   - results.go: results, spooled (package spool) before they are
//     published and resent until the collector's ack removes them; the
//     collector's status, on which they are sent again, with its Last
//     Will, on which the other collectors announce themselves again.
//   - subscriber.go: the collector's side: a Subscriber decodes each
//     result, hands it to the store and acks it only once stored.
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
