package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/spool"
	"github.com/edgebench/edgebench/transport"
	"github.com/edgebench/edgebench/wire"
)

// The tests here attack a collector process over real TCP, as a stolen
// device's account or a stranger would (issue 11).

// lockedBuffer is a process's output, read while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// serveProc is a running `edgebench-collector serve`.
type serveProc struct {
	t           *testing.T
	dir, db     string
	broker, web string
	cmd         *exec.Cmd
	out         *lockedBuffer
	exited      chan struct{}
	err         error // once exited
}

const hostileAccounts = `collector: {username: collector, password: c0llect}
devices:
  - {fleet: lab, id: pi-1, password: one}
  - {fleet: lab, id: pi-2, password: two}
  - {fleet: lab2, id: pi-9, password: nine}
`

func startServe(t *testing.T, bin string, args ...string) *serveProc {
	t.Helper()
	dir := t.TempDir()
	accounts := filepath.Join(dir, "accounts.yaml")
	if err := os.WriteFile(accounts, []byte(hostileAccounts), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &serveProc{t: t, dir: dir, db: filepath.Join(dir, "c.db"), broker: testenv.FreeAddr(t), web: testenv.FreeAddr(t),
		out: &lockedBuffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(bin, append([]string{"serve", "--db", p.db, "--listen", p.broker, "--web", p.web, "--accounts", accounts}, args...)...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() { p.stop() })
	testenv.Until(t, "the collector listening", func() bool {
		if !p.alive() {
			t.Fatalf("serve exited: %v\n%s", p.err, p.out.String())
		}
		c, err := net.Dial("tcp", p.web)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return p
}

func (p *serveProc) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// stop ends the process with SIGTERM and returns its output.
func (p *serveProc) stop() string {
	if p.alive() {
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(30 * time.Second):
			p.cmd.Process.Kill()
			<-p.exited
			p.t.Errorf("serve did not stop on SIGTERM")
		}
	}
	return p.out.String()
}

// device is a device's transport client with a spool.
func (p *serveProc) device(id, password string) *transport.Client {
	p.t.Helper()
	sp, err := spool.Open(p.t.TempDir(), spool.Limits{})
	if err != nil {
		p.t.Fatal(err)
	}
	c, err := transport.Dial(transport.ClientConfig{Broker: "tcp://" + p.broker, Username: id, Password: password, Fleet: "lab", Device: id,
		RetryInterval: 100 * time.Millisecond}, transport.Options{Spool: sp, Birth: &wire.Status{BootID: "b"}})
	if err != nil {
		p.t.Fatal(err)
	}
	p.t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.WaitConnected(ctx); err != nil {
		p.t.Fatalf("%s: %v\n%s", id, err, p.out.String())
	}
	return c
}

// watch subscribes the collector's account to everything under the
// prefix, $SYS included, and returns the count of messages per topic.
func (p *serveProc) watch() func(topic string) int {
	p.t.Helper()
	var mu sync.Mutex
	seen := map[string]int{}
	o := paho.NewClientOptions().AddBroker("tcp://" + p.broker).SetClientID("watcher").SetUsername("collector").SetPassword("c0llect").
		SetAutoReconnect(false)
	c := paho.NewClient(o)
	if tok := c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		p.t.Fatalf("watcher: %v", tok.Error())
	}
	p.t.Cleanup(func() { c.Disconnect(0) })
	for _, f := range []string{wire.DefaultPrefix + "/#", "$SYS/edgebench/#"} {
		if tok := c.Subscribe(f, 1, func(_ paho.Client, m paho.Message) {
			mu.Lock()
			seen[m.Topic()]++
			mu.Unlock()
		}); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			p.t.Fatalf("watcher subscribe: %v", tok.Error())
		}
	}
	return func(topic string) int { mu.Lock(); defer mu.Unlock(); return seen[topic] }
}

// mqttConn is a raw MQTT 3.1.1 connection, for what no well-behaved client
// sends.
type mqttConn struct {
	net.Conn
	r *bufio.Reader
}

type connectOpts struct {
	clientID, user, password string
	willTopic                string // "" for no Will
	willPayload              []byte
}

func dialMQTT(t *testing.T, addr string) *mqttConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &mqttConn{Conn: c, r: bufio.NewReader(c)}
}

func connectBytes(o connectOpts) []byte {
	pk := packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Connect}, ProtocolVersion: 4,
		Connect: packets.ConnectParams{ProtocolName: []byte("MQTT"), Clean: true, Keepalive: 60, ClientIdentifier: o.clientID,
			UsernameFlag: o.user != "", Username: []byte(o.user), PasswordFlag: o.password != "", Password: []byte(o.password)}}
	if o.willTopic != "" {
		pk.Connect.WillFlag, pk.Connect.WillTopic, pk.Connect.WillPayload = true, o.willTopic, o.willPayload
		pk.Connect.WillQos, pk.Connect.WillRetain = 1, true
	}
	var b bytes.Buffer
	if err := pk.ConnectEncode(&b); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// connect sends a CONNECT and returns the CONNACK's return code.
func (c *mqttConn) connect(t *testing.T, o connectOpts) (byte, error) {
	t.Helper()
	if _, err := c.Write(connectBytes(o)); err != nil {
		return 0, err
	}
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	var ack [4]byte
	if _, err := io.ReadFull(c.r, ack[:]); err != nil {
		return 0, err
	}
	if ack[0] != 0x20 || ack[1] != 2 {
		t.Fatalf("not a CONNACK: % x", ack)
	}
	return ack[3], nil
}

// publishHeader is the start of a QoS 0 PUBLISH to topic that announces
// size bytes of payload.
func publishHeader(topic string, size int) []byte {
	rem := 2 + len(topic) + size
	b := []byte{0x30}
	for {
		x := byte(rem % 128)
		rem /= 128
		if rem > 0 {
			x |= 0x80
		}
		b = append(b, x)
		if rem == 0 {
			break
		}
	}
	b = append(b, byte(len(topic)>>8), byte(len(topic)))
	return append(b, topic...)
}

// closedByServer waits (up to limit) for the server to close c, reading
// and discarding what it sends.
func closedByServer(c net.Conn, limit time.Duration) error {
	c.SetReadDeadline(time.Now().Add(limit))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("still open after %s", limit)
	}
	return nil // EOF or reset: closed
}

// TestHostileResultsDoNotStopTheCollector: results whose disk index is
// -1, in the summary (which crashed the collector) or in a sample (which
// broke the run's page), are refused as malformed; the collector goes on
// storing and acking the next result, and its store is readable by its
// owner only.
func TestHostileResultsDoNotStopTheCollector(t *testing.T) {
	p := startServe(t, testenv.Binary(t, "."))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d := p.device("pi-1", "one")

	good := fakeWire("lab", "pi-1", "nginx", 1000, 800, "")
	summary := fakeWire("lab", "pi-1", "nginx", 1000, 800, "")
	summary.Runs[0].System = &wire.System{Disks: []string{"sda"}, Partitions: []bool{true},
		Summary: wire.SysSummary{Disks: []wire.DiskWindow{{I: -1}}}}
	sample := fakeWire("lab", "pi-1", "nginx", 1000, 800, "")
	sample.Runs[0].System = &wire.System{Disks: []string{"sda"}, Partitions: []bool{true},
		Samples: []wire.SysSample{{T: 1000, Disks: []wire.DiskRate{{I: -1}}}}}
	for _, r := range []*wire.Result{summary, sample} {
		b, err := r.MarshalMsg(nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Publish(ctx, wire.DefaultPrefix+"/lab/pi-1/result", 1, false, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.PublishResult(ctx, good); err != nil {
		t.Fatal(err)
	}
	if err := d.WaitAck(ctx, good.ID); err != nil {
		t.Fatalf("the result after the hostile ones is not acked: %v (collector running: %v)\n%s", err, p.alive(), p.out.String())
	}
	get := func(id string) (int, error) {
		resp, err := http.Get("http://" + p.web + "/runs/" + id)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		_, err = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, err
	}
	for _, c := range []struct {
		id   string
		want int
	}{{good.ID, 200}, {summary.ID, 404}, {sample.ID, 404}, {good.ID + "?run=0", 200}} {
		if code, err := get(c.id); err != nil || code != c.want {
			t.Errorf("GET /runs/%s: %d %v, want %d", c.id, code, err, c.want)
		}
	}
	if !p.alive() {
		t.Fatalf("the collector exited: %v\n%s", p.err, p.out.String())
	}
	for _, f := range []string{p.db, p.db + "-wal", p.db + "-shm"} {
		st, err := os.Stat(f)
		if err != nil {
			t.Error(err)
			continue
		}
		if m := st.Mode().Perm(); m != 0o600 {
			t.Errorf("%s: mode %o, want 600", filepath.Base(f), m)
		}
	}
	out := p.stop()
	// The first at once, the second within the minute summed when the
	// collector stops.
	if n, again := strings.Count(out, `"result dropped"`), strings.Count(out, `"result dropped again"`); n != 1 || again != 1 || !strings.Contains(out, `"times":1`) {
		t.Errorf("results logged as dropped %d times, then %d summed lines, want 1 and 1 (times 1):\n%s", n, again, out)
	}
	if !strings.Contains(out, "summary disk index -1") || !strings.Contains(out, "sample 1: disk index -1") {
		t.Errorf("the log does not say what was wrong:\n%s", out)
	}
}

// TestWillACL: a device may not leave a Last Will on a topic it may not
// publish to: its fleet's _all cmd, another fleet's cmd, another device's
// retained status, result or ack, its own cmd or ack. The connection is
// refused (and logged), and nothing reaches those topics when it drops;
// a Will on its own status is accepted and sent.
func TestWillACL(t *testing.T) {
	p := startServe(t, testenv.Binary(t, "."))
	seen := p.watch()
	prefix := wire.DefaultPrefix
	denied := []string{
		prefix + "/lab/_all/cmd",
		prefix + "/lab2/_all/cmd",
		prefix + "/lab2/pi-9/cmd",
		prefix + "/lab/pi-1/status",
		prefix + "/lab/pi-1/result",
		prefix + "/lab/pi-1/ack",
		prefix + "/lab/pi-2/cmd",
		prefix + "/lab/pi-2/ack",
		"$SYS/edgebench/anything",
	}
	payload := []byte("forged")
	for _, topic := range denied {
		c := dialMQTT(t, p.broker)
		code, err := c.connect(t, connectOpts{clientID: "edgebench-lab-pi-2", user: "pi-2", password: "two", willTopic: topic, willPayload: payload})
		if err == nil && code == 0 {
			t.Errorf("Will on %s: connection accepted", topic)
		}
		c.Close() // no DISCONNECT: a Will the broker kept is sent now
	}
	// A Will on its own status is the device's right; dropping the
	// connection sends it, and it is also the sentinel: what the broker
	// sent before has reached the watcher once this has.
	own := prefix + "/lab/pi-2/status"
	c := dialMQTT(t, p.broker)
	if code, err := c.connect(t, connectOpts{clientID: "edgebench-lab-pi-2", user: "pi-2", password: "two", willTopic: own, willPayload: payload}); err != nil || code != 0 {
		t.Fatalf("Will on its own status: code %d, %v\n%s", code, err, p.out.String())
	}
	c.Close()
	testenv.Until(t, "pi-2's own Will", func() bool { return seen(own) > 0 })
	for _, topic := range denied {
		if n := seen(topic); n != 0 {
			t.Errorf("a Will reached %s (%d)", topic, n)
		}
	}
	if n := seen(refusedWillTopic); n != 0 {
		t.Errorf("%d Wills went to %s: they should not have got past CONNECT", n, refusedWillTopic)
	}
	out := p.stop()
	if !strings.Contains(out, "Last Will on a topic the account may not publish to") || !strings.Contains(out, `"will_topic":"edgebench/v1/lab/_all/cmd"`) {
		t.Errorf("refusals not logged:\n%s", out)
	}
}

const refusedWillTopic = "$SYS/edgebench/refused-will"

// TestBrokerPacketLimits: a stranger announcing a huge CONNECT, with or
// without the bytes, and a device announcing or sending a publish over
// the cap are disconnected; a connection that never logs in is closed.
// Nothing is read or kept for them (the memory figures are in the README).
func TestBrokerPacketLimits(t *testing.T) {
	p := startServe(t, testenv.Binary(t, "."))
	big := func(size int) []byte { // a CONNECT header announcing size bytes
		b := []byte{0x10}
		for {
			x := byte(size % 128)
			size /= 128
			if size > 0 {
				x |= 0x80
			}
			b = append(b, x)
			if size == 0 {
				return b
			}
		}
	}
	// Each is refused before its deadline for a login (10 s) could close it.
	for _, c := range []struct {
		name  string
		send  []byte
		bytes int // then this many bytes of junk
	}{
		{"CONNECT announcing 256 MiB", big(256<<20 - 1), 0}, // MQTT's largest
		{"CONNECT announcing 256 MiB, bytes following", big(256<<20 - 1), 1 << 20},
		{"CONNECT announcing 100 KiB", big(100 << 10), 100 << 10},
	} {
		conn := dialMQTT(t, p.broker)
		conn.Write(c.send)
		if c.bytes > 0 {
			go conn.Write(make([]byte, c.bytes)) // fails once the server closes
		}
		if err := closedByServer(conn, 8*time.Second); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	// A logged-in device: a publish over the cap ends its connection.
	for _, c := range []struct {
		name  string
		size  int
		bytes bool
	}{
		{"publish announcing 150 MiB", 150 << 20, false},
		{"publish of 300 KiB", 300 << 10, true},
	} {
		conn := dialMQTT(t, p.broker)
		if code, err := conn.connect(t, connectOpts{clientID: "edgebench-lab-pi-1", user: "pi-1", password: "one"}); err != nil || code != 0 {
			t.Fatalf("pi-1 login: %d %v", code, err)
		}
		conn.Write(publishHeader(wire.DefaultPrefix+"/lab/pi-1/result", c.size))
		if c.bytes {
			go conn.Write(make([]byte, c.size))
		}
		if err := closedByServer(conn, 20*time.Second); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	// Under the cap the same device stays connected (the payload is no
	// result: dropped as malformed).
	conn := dialMQTT(t, p.broker)
	if code, err := conn.connect(t, connectOpts{clientID: "edgebench-lab-pi-1", user: "pi-1", password: "one"}); err != nil || code != 0 {
		t.Fatalf("pi-1 login: %d %v", code, err)
	}
	conn.Write(append(publishHeader(wire.DefaultPrefix+"/lab/pi-1/result", 200<<10), make([]byte, 200<<10)...))
	conn.Write([]byte{0xc0, 0}) // PINGREQ
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	var pong [2]byte
	if _, err := io.ReadFull(conn, pong[:]); err != nil || pong != [2]byte{0xd0, 0} {
		t.Errorf("after a 200 KiB publish: % x %v", pong, err)
	}
	// Silence after the TCP handshake: closed at 2 s, before the login
	// is overdue.
	idle := dialMQTT(t, p.broker)
	if err := closedByServer(idle, 30*time.Second); err != nil {
		t.Errorf("a connection that never sent CONNECT: %v", err)
	}
	if !p.alive() {
		t.Fatalf("the collector exited: %v\n%s", p.err, p.out.String())
	}
	out := p.stop()
	for _, want := range []string{"CONNECT larger than 16384 bytes", "nothing sent within 2s", "packet over the 270336-byte cap"} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %q:\n%s", want, out)
		}
	}
}

// TestRefusedLoginsLogged: a device with a wrong password is logged with
// its client id, user and the reason; a hostile client trying a thousand
// times adds four lines (unknown user, then its address throttled: a
// first line and a count of each), not a thousand.
func TestRefusedLoginsLogged(t *testing.T) {
	p := startServe(t, testenv.Binary(t, "."))
	try := func(o connectOpts) {
		c := dialMQTT(t, p.broker)
		if code, err := c.connect(t, o); err == nil && code == 0 {
			t.Errorf("%+v: connected", o)
		}
		c.Close()
	}
	try(connectOpts{clientID: "edgebench-lab-pi-1", user: "pi-1", password: "wrong"})
	try(connectOpts{clientID: "edgebench-lab-pi-1", user: "pi-3", password: "three"})
	try(connectOpts{clientID: "edgebench-lab-pi-1", user: "pi-2", password: "two"})
	for i := range 1000 {
		try(connectOpts{clientID: fmt.Sprintf("x-%d", i), user: "intruder", password: fmt.Sprint(i)})
	}
	out := p.stop()
	for _, want := range []string{
		`"reason":"wrong password","user":"pi-1","client_id":"edgebench-lab-pi-1"`,
		`"reason":"unknown user","user":"pi-3"`,
		`"reason":"client id is not the device's (edgebench-lab-pi-2)","user":"pi-2","client_id":"edgebench-lab-pi-1"`,
		`"reason":"unknown user","user":"intruder","client_id":"x-0"`,
		`"reason":"too many failed logins from this address","user":"intruder"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %s", want)
		}
	}
	// The address is throttled after its 10th failure: the intruder's
	// refusals are two reasons, each a first line and a count.
	lines, times := 0, 0
	for _, l := range strings.Split(out, "\n") {
		if !strings.Contains(l, `"user":"intruder"`) {
			continue
		}
		lines++
		times++
		if i := strings.Index(l, `"times":`); i >= 0 {
			n, _ := strconv.Atoi(strings.TrimRight(strings.SplitN(l[i+len(`"times":`):], ",", 2)[0], "}"))
			times += n - 1
		}
	}
	if lines != 4 || times != 1000 {
		t.Errorf("%d lines about the intruder, counting %d refusals; want 4 and 1000:\n%s", lines, times, out)
	}
}

// TestWebRefusesOtherHosts: a page of another site whose name resolves
// to 127.0.0.1 (DNS rebinding) reaches the collector with its own name as
// Host: refused, on the API and the pages; the addresses and names the
// collector answers to pass.
func TestWebRefusesOtherHosts(t *testing.T) {
	bin := testenv.Binary(t, ".")
	do := func(p *serveProc, method, path, host string) (int, string) {
		t.Helper()
		c, err := net.DialTimeout("tcp", p.web, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		body := `{"device":"pi-1","fleet":"lab","spec":{"url":"http://127.0.0.1/"}}`
		fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: %s\r\nOrigin: http://%s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
			method, path, host, host, len(body), body)
		c.SetReadDeadline(time.Now().Add(20 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("%s %s Host %s: %v", method, path, host, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	p := startServe(t, bin)
	_, port, _ := net.SplitHostPort(p.web)
	for _, host := range []string{"evil.example", "evil.example:" + port, "127.0.0.1.nip.io:" + port, "localhost.evil.example"} {
		for _, r := range []struct{ method, path string }{{"POST", "/api/trigger"}, {"GET", "/api/devices"}, {"GET", "/"}} {
			if code, body := do(p, r.method, r.path, host); code != http.StatusMisdirectedRequest {
				t.Errorf("%s %s with Host %s: %d %s", r.method, r.path, host, code, body)
			}
		}
	}
	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "LOCALHOST", "[::1]:" + port} {
		if code, body := do(p, "GET", "/api/devices", host); code != 200 {
			t.Errorf("GET /api/devices with Host %s: %d %s", host, code, body)
		}
	}
	p.stop()

	// The names given with --web-host pass too.
	p = startServe(t, bin, "--web-host", "bench.lan", "--web-host", "Collector.Example.org")
	_, port, _ = net.SplitHostPort(p.web)
	for _, host := range []string{"bench.lan:" + port, "collector.example.org."} {
		if code, body := do(p, "GET", "/api/devices", host); code != 200 {
			t.Errorf("GET /api/devices with Host %s: %d %s", host, code, body)
		}
	}
	if code, _ := do(p, "GET", "/", "evil.example"); code != http.StatusMisdirectedRequest {
		t.Errorf("with --web-host, Host evil.example: %d", code)
	}
}
