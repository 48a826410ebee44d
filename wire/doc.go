// Package wire is edgebench's wire: the msgpack schema of every message a
// device and the collector exchange (schema.go; the code msgp generates
// from it is in schema_gen.go: go generate ./wire), the decoders that check
// what a hostile peer may send (decode.go, validate.go), and the MQTT
// topics the messages travel on (topics.go). It imports no MQTT client, no
// load generator and no sampler: it is what both ends agree on, and all a
// reader of stored payloads needs.
//
//	b, err := res.MarshalMsg(nil)           // encode (generated)
//	res, err := wire.DecodeResult(b)        // decode: size cap, shape, limits, version, indexes
//	topic, err := wire.Topics{Prefix: wire.DefaultPrefix}.Topic("lab", "pi4-07", wire.TopicResult)
//
// Decoders check a size cap, the shape of the msgpack and element limits
// before they allocate, and never panic on hostile input; a decoded Result
// can be indexed and summed without checks of its own. What schema
// version 1 sent is frozen in testdata/v1 and decoded by a test for ever.
package wire
