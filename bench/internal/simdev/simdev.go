// Package simdev connects the simulated devices of the benches
// (bench/history, bench/fleet) to a collector's broker: each an MQTT
// client with its own account (password "pw-" and its id) subscribed to
// its acks.
package simdev

import (
	"fmt"
	"os"
	"sync"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/edgebench/edgebench/transport"
	"github.com/edgebench/edgebench/wire"
)

// ID is the id of simulated device i: dev-0000, dev-0001, ...
func ID(i int) string { return fmt.Sprintf("dev-%04d", i) }

// WriteAccounts writes the collector's accounts file for devices n of
// fleet to path: the collector's own login, then quota (a line of the
// file, "" for the default quota), then one account each.
func WriteAccounts(path, fleet string, n int, quota string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	fmt.Fprintln(f, "collector: {username: collector, password: bench-collector}")
	if quota != "" {
		fmt.Fprintln(f, quota)
	}
	fmt.Fprintln(f, "devices:")
	for i := range n {
		fmt.Fprintf(f, "  - {fleet: %s, id: %s, password: pw-%s}\n", fleet, ID(i), ID(i))
	}
	return f.Close()
}

// Fleet is n connected devices of one fleet.
type Fleet struct {
	// Clients[i] is device ID(i)'s connection; Acks[i] receives the acks
	// the collector sent it, a refusal's included (an ack that finds it
	// full is dropped: size it for the results a device has unacked).
	Clients []paho.Client
	Acks    []chan wire.Ack
}

// Connect connects devices n of fleet to broker, 50 at a time, each
// subscribed to its acks with a channel of buf. On error the devices
// connected are disconnected.
func Connect(broker, fleet string, n, buf int) (*Fleet, error) {
	f := &Fleet{Clients: make([]paho.Client, n), Acks: make([]chan wire.Ack, n)}
	var mu sync.Mutex
	var first error
	fail := func(err error) {
		mu.Lock()
		if first == nil {
			first = err
		}
		mu.Unlock()
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 50)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			id := ID(i)
			ch := make(chan wire.Ack, buf)
			f.Acks[i] = ch
			o := paho.NewClientOptions().AddBroker(broker).SetClientID(transport.DeviceClientID(fleet, id)).
				SetUsername(id).SetPassword("pw-" + id).SetCleanSession(true).SetAutoReconnect(false).
				SetConnectTimeout(30 * time.Second).SetKeepAlive(60 * time.Second).SetOrderMatters(false)
			c := paho.NewClient(o)
			if tok := c.Connect(); !tok.WaitTimeout(60*time.Second) || tok.Error() != nil {
				fail(fmt.Errorf("%s connect: %v", id, tok.Error()))
				return
			}
			tok := c.Subscribe(wire.DefaultPrefix+"/"+fleet+"/"+id+"/ack", 1, func(_ paho.Client, m paho.Message) {
				if a, err := wire.DecodeAck(m.Payload()); err == nil {
					select {
					case ch <- *a:
					default:
					}
				}
			})
			if !tok.WaitTimeout(30*time.Second) || tok.Error() != nil {
				c.Disconnect(100)
				fail(fmt.Errorf("%s subscribe: %v", id, tok.Error()))
				return
			}
			f.Clients[i] = c
		}()
	}
	wg.Wait()
	if first != nil {
		f.Close()
		return nil, first
	}
	return f, nil
}

// Close disconnects the devices.
func (f *Fleet) Close() {
	for _, c := range f.Clients {
		if c != nil {
			c.Disconnect(100)
		}
	}
}
