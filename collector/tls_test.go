package collector

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/spool"
	"github.com/edgebench/edgebench/transport"
)

// TestEmbeddedBrokerTLS: with a certificate, a client CA and accounts,
// the embedded broker takes a device that shows the CA-signed certificate
// and its password over TLS, and stores its result; plain TCP and TLS
// without a client certificate are refused.
func TestEmbeddedBrokerTLS(t *testing.T) {
	dir := t.TempDir()
	files := testenv.Certs(t, dir, "pi-1")
	listen := testenv.FreeAddr(t)
	col := startCollector(t, Config{DB: filepath.Join(dir, "tls.db"), Listen: listen, Accounts: testAccounts(), Web: "-",
		TLSCert: files.ServerCert, TLSKey: files.ServerKey, ClientCAFile: files.CA})
	defer col.Close()

	dial := func(broker, id, caFile, certFile, keyFile string) *transport.Client {
		t.Helper()
		sp, err := spool.Open(t.TempDir(), spool.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		c, err := transport.Dial(transport.ClientConfig{Broker: broker, ClientID: id, Username: "pi-1", Password: "one",
			Fleet: "lab", Device: "pi-1", CAFile: caFile, CertFile: certFile, KeyFile: keyFile,
			RetryInterval: 200 * time.Millisecond, ConnectTimeout: 2 * time.Second}, transport.Options{Spool: sp})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	dev := dial("mqtts://"+listen, "edgebench-lab-pi-1", files.CA, files.ClientCert, files.ClientKey)
	if err := dev.WaitConnected(ctx); err != nil {
		t.Fatalf("device over TLS: %v", err)
	}
	res := storetest.FakeResult(rand.New(rand.NewPCG(7, 8)), "lab", "pi-1", map[string]string{"server": "nginx"}, time.Now(), 1000, 800)
	if err := dev.PublishResult(ctx, res); err != nil {
		t.Fatal(err)
	}
	if err := dev.WaitAck(ctx, res.ID); err != nil {
		t.Fatalf("result over TLS not acked: %v", err)
	}
	if _, err := col.Store().Result(ctx, res.ID); err != nil {
		t.Fatalf("acked but not stored: %v", err)
	}
	dev.Close()

	for name, c := range map[string]*transport.Client{
		"plain TCP":             dial("tcp://"+listen, "edgebench-lab-pi-1", "", "", ""),
		"no client certificate": dial("mqtts://"+listen, "edgebench-lab-pi-1", files.CA, "", ""),
	} {
		short, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
		if err := c.WaitConnected(short); err == nil {
			t.Errorf("%s: connected", name)
		}
		cancel()
	}
}
