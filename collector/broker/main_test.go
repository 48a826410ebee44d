package broker

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/edgebench/edgebench/spool"
	"github.com/edgebench/edgebench/transport"
	"github.com/edgebench/edgebench/wire"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) { os.Exit(code) }))
}

const prefix = wire.DefaultPrefix

// testAccounts are the collector's account and two devices of fleet lab,
// checked.
func testAccounts(t testing.TB) *Accounts {
	t.Helper()
	a := &Accounts{
		Collector: Account{Username: "collector", Password: "collector-secret"},
		Devices:   []Account{{Fleet: "lab", ID: "pi-1", Password: "one"}, {Fleet: "lab", ID: "pi-2", Password: "two"}},
	}
	if err := a.Check(); err != nil {
		t.Fatal(err)
	}
	return a
}

// startObserved starts a broker on listen with accounts a and limits lim,
// whose log the test reads; it is closed when the test ends.
func startObserved(t *testing.T, listen string, a *Accounts, lim Limits) *observer.ObservedLogs {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	b, err := Start(Config{Listen: listen, Accounts: a, Prefix: prefix, Limits: lim, Log: zap.New(core)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return logs
}

// device is a device's transport client with a spool, logged in.
func device(t *testing.T, broker, fleet, id, password string) *transport.Client {
	t.Helper()
	sp, err := spool.Open(t.TempDir(), spool.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := transport.Dial(transport.ClientConfig{Broker: broker, Username: id, Password: password, Fleet: fleet, Device: id,
		RetryInterval: 200 * time.Millisecond}, transport.Options{Spool: sp})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.WaitConnected(ctx); err != nil {
		c.Close()
		t.Fatal(err)
	}
	return c
}

// rawClient is a plain paho client, for what a misbehaving device sends.
func rawClient(broker, clientID, user, password string) (paho.Client, error) {
	o := paho.NewClientOptions().AddBroker(broker).SetClientID(clientID).SetUsername(user).SetPassword(password).
		SetAutoReconnect(false).SetConnectRetry(false).SetConnectTimeout(5 * time.Second)
	c := paho.NewClient(o)
	tok := c.Connect()
	if !tok.WaitTimeout(10 * time.Second) {
		return nil, fmt.Errorf("connect: no answer")
	}
	if err := tok.Error(); err != nil {
		return nil, err
	}
	return c, nil
}
