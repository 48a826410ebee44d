package transport

import (
	mqtt "github.com/eclipse/paho.mqtt.golang"
	"github.com/eclipse/paho.mqtt.golang/packets"
)

// copyStore is paho's memory store holding copies of the packets. paho's
// own store keeps the packet it was given, and on a reconnect sets the DUP
// flag on it while an outgoing goroutine of the new connection may still
// be writing that same packet from its queue (a data race the race
// detector reports). With copies in and out, each packet has one user.
type copyStore struct {
	mqtt.Store
}

func newCopyStore() *copyStore { return &copyStore{mqtt.NewMemoryStore()} }

func (s *copyStore) Put(key string, m packets.ControlPacket) {
	if p, ok := m.(*packets.PublishPacket); ok && p.Retain {
		return
	}
	s.Store.Put(key, copyPacket(m))
}

func (s *copyStore) Get(key string) packets.ControlPacket { return copyPacket(s.Store.Get(key)) }

// copyPacket copies the packet kinds paho stores; payloads and topic lists
// are shared, as nothing writes to them.
func copyPacket(m packets.ControlPacket) packets.ControlPacket {
	switch p := m.(type) {
	case *packets.PublishPacket:
		c := *p
		return &c
	case *packets.SubscribePacket:
		c := *p
		return &c
	case *packets.UnsubscribePacket:
		c := *p
		return &c
	case *packets.PubrelPacket:
		c := *p
		return &c
	case *packets.PubrecPacket:
		c := *p
		return &c
	}
	return m
}
