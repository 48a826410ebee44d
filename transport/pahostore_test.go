package transport

import (
	"testing"

	"github.com/eclipse/paho.mqtt.golang/packets"
)

// TestCopyStoreKeepsNoRetained: paho resends what its store holds after a
// reconnect; a retained status must not be among it, a result must.
func TestCopyStoreKeepsNoRetained(t *testing.T) {
	s := newCopyStore()
	s.Open()
	defer s.Close()
	status := packets.NewControlPacket(packets.Publish).(*packets.PublishPacket)
	status.Qos, status.Retain, status.MessageID, status.TopicName = 1, true, 1, "edgebench/v1/lab/pi/status"
	result := packets.NewControlPacket(packets.Publish).(*packets.PublishPacket)
	result.Qos, result.MessageID, result.TopicName = 1, 2, "edgebench/v1/lab/pi/result"
	s.Put("o.1", status)
	s.Put("o.2", result)
	if got := s.All(); len(got) != 1 || got[0] != "o.2" {
		t.Fatalf("stored keys %v, want only the result's", got)
	}
	p := s.Get("o.2").(*packets.PublishPacket)
	if p == result || p.TopicName != result.TopicName {
		t.Errorf("Get returned %p (put %p), topic %q: want a copy", p, result, p.TopicName)
	}
}
