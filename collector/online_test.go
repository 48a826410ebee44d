package collector

import (
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/transport"
	"github.com/edgebench/edgebench/wire"
)

// TestCollectorStatusForDevices: the collector publishes its retained
// status once subscribed; a device's account may read it and may not
// overwrite it.
func TestCollectorStatusForDevices(t *testing.T) {
	listen := testenv.FreeAddr(t)
	broker := "tcp://" + listen
	col := startCollector(t, Config{DB: t.TempDir() + "/c.db", Listen: listen, Accounts: testAccounts()})
	defer col.Close()
	topic := wire.Topics{Prefix: prefix}.CollectorStatus()
	read := func() *wire.Status {
		t.Helper()
		c, err := testenv.MQTTClient(broker, "edgebench-lab-pi-2", "pi-2", "two")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Disconnect(0)
		got := make(chan []byte, 1)
		if tok := c.Subscribe(topic, 1, func(_ paho.Client, m paho.Message) {
			select {
			case got <- m.Payload():
			default:
			}
		}); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			t.Fatalf("subscribe: %v", tok.Error())
		}
		select {
		case b := <-got:
			st, err := wire.DecodeStatus(b)
			if err != nil {
				t.Fatalf("collector status: %v", err)
			}
			return st
		case <-time.After(10 * time.Second):
			t.Fatal("no retained collector status")
			return nil
		}
	}
	first := read()
	if first.State != wire.StatusOnline || first.BootID == "" {
		t.Fatalf("collector status %+v", first)
	}
	c, err := testenv.MQTTClient(broker, "edgebench-lab-pi-1", "pi-1", "one")
	if err != nil {
		t.Fatal(err)
	}
	forged, _ := (&wire.Status{V: wire.SchemaVersion, State: wire.StatusOnline, BootID: "forged", ConnSeq: 1}).MarshalMsg(nil)
	c.Publish(topic, 1, true, forged).WaitTimeout(5 * time.Second)
	c.Disconnect(0)
	if again := read(); again.BootID != first.BootID {
		t.Errorf("a device overwrote the collector status: %+v", again)
	}
	// `edgebench run --publish` logs in with the device's account under
	// its own client id, and only as that device.
	if c, err := testenv.MQTTClient(broker, transport.RunClientID("lab", "pi-1"), "pi-1", "one"); err != nil {
		t.Errorf("run --publish's client id refused: %v", err)
	} else {
		c.Disconnect(0)
	}
	if c, err := testenv.MQTTClient(broker, transport.RunClientID("lab", "pi-2"), "pi-1", "one"); err == nil {
		c.Disconnect(0)
		t.Error("pi-1 connected as pi-2's run --publish")
	}
}
