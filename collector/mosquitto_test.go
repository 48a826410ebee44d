package collector

import (
	"context"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/spool"
	"github.com/edgebench/edgebench/transport"
	"github.com/edgebench/edgebench/wire"
)

// scaledMosquitto runs mosquitto with the configuration and ACL file of
// packaging/mosquitto (the README's "When one box is not enough"), their
// paths moved to the test's folder, and a password file of the collector
// and of devices lab/pi-1 and lab/pi-2 (passwords one and two).
func scaledMosquitto(t *testing.T) string {
	t.Helper()
	passwd, err := exec.LookPath("mosquitto_passwd")
	if err != nil {
		testenv.Mosquitto(t) // skips or fails as mosquitto's absence does
		t.Fatal("mosquitto_passwd is not installed: it comes with mosquitto")
	}
	dir := t.TempDir()
	pw := filepath.Join(dir, "edgebench.passwd")
	for user, pass := range map[string]string{"collector": "c0llect", "lab/pi-1": "one", "lab/pi-2": "two"} {
		args := []string{"-b", pw, user, pass}
		if _, err := os.Stat(pw); err != nil {
			args = append([]string{"-c"}, args...)
		}
		if out, err := exec.Command(passwd, args...).CombinedOutput(); err != nil {
			t.Fatalf("mosquitto_passwd: %v\n%s", err, out)
		}
	}
	acl, err := os.ReadFile("../packaging/mosquitto/edgebench.acl")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "edgebench.acl"), acl, 0o600); err != nil {
		t.Fatal(err)
	}
	conf, err := os.ReadFile("../packaging/mosquitto/edgebench.conf")
	if err != nil {
		t.Fatal(err)
	}
	c := string(conf)
	for _, r := range []struct{ re, to string }{
		{`(?m)^listener 1883\n`, ""},
		{`(?m)^per_listener_settings .*\n`, ""},
		{`/etc/mosquitto/edgebench\.`, dir + "/edgebench."},
		{`/var/lib/mosquitto/`, dir + "/"},
	} {
		if !regexp.MustCompile(r.re).MatchString(c) {
			t.Fatalf("packaging/mosquitto/edgebench.conf lacks %s", r.re)
		}
		c = regexp.MustCompile(r.re).ReplaceAllLiteralString(c, r.to)
	}
	if os.Geteuid() == 0 { // mosquitto would run as user mosquitto, who cannot read the test's folder
		c += "user root\n"
	}
	return testenv.MosquittoConfig(t, c)
}

// listener is a raw MQTT client that records what it receives.
type listener struct {
	c   paho.Client
	mu  sync.Mutex
	got map[string]int
}

func listen(t *testing.T, broker, clientID, user, pass string, filters ...string) *listener {
	t.Helper()
	c, err := testenv.MQTTClient(broker, clientID, user, pass)
	if err != nil {
		t.Fatalf("%s: %v", user, err)
	}
	t.Cleanup(func() { c.Disconnect(0) })
	l := &listener{c: c, got: map[string]int{}}
	for _, f := range filters {
		tok := c.Subscribe(f, 1, func(_ paho.Client, m paho.Message) {
			l.mu.Lock()
			l.got[m.Topic()]++
			l.mu.Unlock()
		})
		tok.WaitTimeout(5 * time.Second)
	}
	return l
}

func (l *listener) seen(topic string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.got[topic]
}

// TestMosquittoACL: with the configuration of packaging/mosquitto, a
// device's account publishes only on its own topics and reads only its
// own commands and acks, its fleet's _all commands and the collectors'
// status; anonymous and wrong logins are refused; and a collector and a
// device get a result stored and acked through it.
func TestMosquittoACL(t *testing.T) {
	broker := scaledMosquitto(t)
	if _, err := testenv.MQTTClient(broker, "anon", "", ""); err == nil {
		t.Error("an anonymous client was admitted")
	}
	if _, err := testenv.MQTTClient(broker, "edgebench-lab-pi-1", "lab/pi-1", "two"); err == nil {
		t.Error("a wrong password was admitted")
	}
	const p = "edgebench/v1/"
	col := listen(t, broker, "watcher", "collector", "c0llect", p+"#")
	pi1 := listen(t, broker, "edgebench-lab-pi-1", "lab/pi-1", "one", p+"#")
	pi2 := listen(t, broker, "edgebench-lab-pi-2", "lab/pi-2", "two", p+"lab/pi-2/cmd", p+"lab/pi-2/ack", p+"lab/_all/cmd", p+"collector/status")
	pub := func(l *listener, topic string) {
		l.c.Publish(topic, 1, false, []byte{0x80}).WaitTimeout(5 * time.Second)
	}
	// What each may do arrives...
	pub(pi1, p+"lab/pi-1/result")
	pub(pi1, p+"lab/pi-1/status")
	for _, k := range []string{"cmd", "ack"} {
		pub(col, p+"lab/pi-2/"+k)
	}
	pub(col, p+"lab/_all/cmd")
	pub(col, p+"collector/status")
	pub(col, p+"lab/_alerts/change/pi-1") // alerts: for the collectors' accounts only
	testenv.Until(t, "the allowed messages", func() bool {
		return col.seen(p+"lab/_alerts/change/pi-1") > 0 && col.seen(p+"lab/pi-1/result") > 0 && col.seen(p+"lab/pi-1/status") > 0 && pi2.seen(p+"lab/pi-2/cmd") > 0 &&
			pi2.seen(p+"lab/pi-2/ack") > 0 && pi2.seen(p+"lab/_all/cmd") > 0 && pi2.seen(p+"collector/status") > 0
	})
	// ...and what they may not does not: pi-1 publishes on others' topics,
	// then on its own heartbeat, a marker (mosquitto handles a client's
	// messages in order).
	for _, topic := range []string{"lab/pi-2/result", "lab/pi-2/status", "lab/pi-2/cmd", "lab/_all/cmd", "collector/status", "other/pi-1/result"} {
		pub(pi1, p+topic)
	}
	pub(pi1, p+"lab/pi-1/heartbeat")
	testenv.Until(t, "the marker", func() bool { return col.seen(p+"lab/pi-1/heartbeat") > 0 })
	for topic, want := range map[string]int{"lab/pi-2/result": 0, "lab/pi-2/status": 0, "other/pi-1/result": 0,
		"lab/pi-2/cmd": 1, "lab/_all/cmd": 1, "collector/status": 1} { // the collector's own
		if n := col.seen(p + topic); n != want {
			t.Errorf("%s: %d messages, want %d: pi-1 published on it", topic, n, want)
		}
	}
	for topic, want := range map[string]int{"lab/pi-2/cmd": 0, "lab/pi-2/ack": 0, "lab/pi-1/result": 0, "lab/pi-1/heartbeat": 0,
		"lab/_alerts/change/pi-1": 0, "lab/_all/cmd": 1, "collector/status": 1} {
		if n := pi1.seen(p + topic); n != want {
			t.Errorf("pi-1 read %d messages of %s, want %d", n, topic, want)
		}
	}
	// A Will on another device's topic is never sent: pi-1 connects
	// with one and its connection drops; then again with a Will on its
	// own status, a marker, which is sent.
	before := col.seen(p + "lab/pi-1/status")
	dropWithWill(t, broker, "edgebench-lab-pi-1", "lab/pi-1", "one", p+"lab/pi-2/status")
	dropWithWill(t, broker, "edgebench-lab-pi-1", "lab/pi-1", "one", p+"lab/pi-1/status")
	testenv.Until(t, "pi-1's own Will", func() bool { return col.seen(p+"lab/pi-1/status") > before })
	if n := col.seen(p + "lab/pi-2/status"); n != 0 {
		t.Errorf("pi-1's Will on pi-2's status was sent (%d)", n)
	}

	// The whole path: a collector of a share group and a device.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := startCollector(t, Config{DB: filepath.Join(t.TempDir(), "acl.db"), Broker: broker, Username: "collector", Password: "c0llect",
		Share: "ingest", Web: "-"})
	defer c.Close()
	sp, err := spool.Open(t.TempDir(), spool.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := transport.Dial(transport.ClientConfig{Broker: broker, Username: "lab/pi-2", Password: "two", Fleet: "lab", Device: "pi-2"},
		transport.Options{Spool: sp, Birth: &wire.Status{BootID: "b", Info: &wire.DeviceInfo{Board: "Raspberry Pi 4"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	res := storetest.FakeResult(rand.New(rand.NewPCG(1, 2)), "lab", "pi-2", nil, time.Now(), 1000, 800)
	if err := d.PublishResult(ctx, res); err != nil {
		t.Fatal(err)
	}
	if err := d.WaitAck(ctx, res.ID); err != nil {
		t.Fatalf("no ack through mosquitto: %v", err)
	}
	testenv.Until(t, "pi-2's status stored", func() bool {
		ds, err := c.Store().Devices(ctx)
		return err == nil && len(ds) == 1 && ds[0].Online && strings.Contains(ds[0].Info.Board, "Raspberry")
	})
}

// dropWithWill logs in over a bare TCP connection with a Last Will on
// willTopic (QoS 1, retained) and closes the connection without a
// DISCONNECT, as a device that loses power: the broker then sends the
// Will, if the account may publish it.
func dropWithWill(t *testing.T, broker, clientID, user, pass, willTopic string) {
	t.Helper()
	str := func(s string) []byte { return append([]byte{byte(len(s) >> 8), byte(len(s))}, s...) }
	body := append([]byte{0, 4, 'M', 'Q', 'T', 'T', 4, 0xEE, 0, 60}, str(clientID)...) // user, password, Will retained QoS 1, clean
	for _, f := range []string{willTopic, "\x80", user, pass} {
		body = append(body, str(f)...)
	}
	pkt := []byte{0x10}
	for n := len(body); ; n >>= 7 {
		if n < 0x80 {
			pkt = append(pkt, byte(n))
			break
		}
		pkt = append(pkt, byte(n&0x7f|0x80))
	}
	conn, err := net.DialTimeout("tcp", strings.TrimPrefix(broker, "tcp://"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write(append(pkt, body...)); err != nil {
		t.Fatal(err)
	}
	ack := make([]byte, 4)
	if _, err := io.ReadFull(conn, ack); err != nil || ack[0] != 0x20 || ack[3] != 0 {
		t.Fatalf("CONNACK %x: %v", ack, err)
	}
}

// TestMosquittoConfigInREADME: the README shows the mosquitto files as
// they are.
func TestMosquittoConfigInREADME(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"edgebench.conf", "edgebench.acl"} {
		b, err := os.ReadFile("../packaging/mosquitto/" + f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(readme), "```\n"+string(b)+"```\n") {
			t.Errorf("README.md does not show packaging/mosquitto/%s as it is", f)
		}
	}
}

// TestMosquittoACLLookAlikes: with packaging/mosquitto's ACL, a device
// that subscribes with wildcards, shared subscriptions and $SYS filters
// reads nothing beyond what the template gives it, and publishes nowhere
// but its own four topics: not on another's look-alike, a command, an
// ack, a fleet's _all, a level below its own, or a $ topic. Reading every
// fleet's _all commands is the template's documented allowance (mosquitto
// patterns cannot name the fleet of a user lab/pi-1; signatures cover it).
func TestMosquittoACLLookAlikes(t *testing.T) {
	broker := scaledMosquitto(t)
	const p = "edgebench/v1/"
	col := listen(t, broker, "watcher", "collector", "c0llect", "#", "$SYS/#")
	pi1 := listen(t, broker, "edgebench-lab-pi-1", "lab/pi-1", "one", "#", "$SYS/#", "$share/g/"+p+"lab/pi-2/cmd",
		"$share/g/#", p+"+/+/ack", p+"lab/+/result", p+"+/_all/#")
	pub := func(l *listener, topic string) {
		l.c.Publish(topic, 1, false, []byte{0x80}).WaitTimeout(5 * time.Second)
	}
	// The collector sends what pi-1 must not read, then a marker pi-1 may.
	notForPi1 := []string{p + "lab/pi-2/cmd", p + "lab/pi-2/ack", p + "lab/pi-2/result", p + "other/pi-1/cmd", p + "other/pi-1/ack",
		p + "lab/pi-1x/cmd", p + "lab/pi-1/cmd/x", p + "lab/_all/ack", p + "lab/pi-1/result"}
	for _, topic := range notForPi1 {
		pub(col, topic)
	}
	pub(col, p+"other/_all/cmd") // the documented allowance
	pub(col, p+"lab/pi-1/ack")   // the marker
	testenv.Until(t, "pi-1's marker", func() bool { return pi1.seen(p+"lab/pi-1/ack") > 0 })
	for _, topic := range notForPi1 {
		if n := pi1.seen(topic); n != 0 {
			t.Errorf("pi-1 read %s (%d)", topic, n)
		}
	}
	if n := pi1.seen(p + "other/_all/cmd"); n == 0 {
		t.Errorf("pi-1 did not read another fleet's _all commands: the template changed, update README and this test")
	}
	pi1.mu.Lock()
	for topic := range pi1.got {
		if strings.HasPrefix(topic, "$") {
			t.Errorf("pi-1 read %s", topic)
		}
	}
	pi1.mu.Unlock()

	// pi-1 publishes where it may not, then a marker on its own heartbeat.
	denied := []string{p + "lab/pi-1/cmd", p + "lab/pi-1/ack", p + "lab/_all/cmd", p + "other/_all/cmd", p + "lab/pi-1/status/x",
		p + "lab/pi-1x/status", p + "lab/pi-2/status", p + "collector/status", "$SYS/edgebench", "$share/g/" + p + "lab/pi-1/status", "x/" + p + "lab/pi-1/status"}
	for _, topic := range denied {
		pub(pi1, topic)
	}
	pub(pi1, p+"lab/pi-1/heartbeat")
	testenv.Until(t, "the collector's marker", func() bool { return col.seen(p+"lab/pi-1/heartbeat") > 0 })
	for _, topic := range denied {
		want := 0
		if slices.Contains(notForPi1, topic) || topic == p+"other/_all/cmd" || topic == p+"lab/pi-1/ack" {
			want = 1 // the collector's own
		}
		if n := col.seen(topic); n != want {
			t.Errorf("%s: %d messages, want %d: pi-1 published on it", topic, n, want)
		}
	}
}
