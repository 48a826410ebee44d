package broker

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"
	"go.uber.org/zap"
	"golang.org/x/crypto/bcrypt"

	"github.com/edgebench/edgebench/internal/testenv"
)

// TestLoginThrottle: at freeFailures failures, an address and a user name
// (known or not) are refused for a backoff that doubles up to its cap;
// an account logging in again from an address it logged in from before
// is known.
func TestLoginThrottle(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	l := newLogins(LoginLimits{FreeFailures: 3, Backoff: time.Second, MaxBackoff: 4 * time.Second})
	l.now = func() time.Time { return now }
	a, b, c := sourceOf("192.0.2.1:4000"), sourceOf("192.0.2.2:4000"), sourceOf("192.0.2.3:4000")
	// An address: two failures free, the third one starts 1 s, then 2 s,
	// 4 s, 4 s.
	for i := range 2 {
		if why := l.throttled(a, "u"+string(rune('a'+i))); why != "" {
			t.Fatalf("failure %d refused: %s", i, why)
		}
		l.failed(a, "u"+string(rune('a'+i)))
	}
	l.failed(a, "uc")
	for _, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second} {
		if why := l.throttled(a, "other"); !strings.Contains(why, "from this address") {
			t.Fatalf("within the backoff of %s: %q", want, why)
		}
		now = now.Add(want - time.Millisecond)
		if l.throttled(a, "other") == "" {
			t.Fatalf("backoff shorter than %s", want)
		}
		now = now.Add(time.Millisecond)
		if why := l.throttled(a, "other"); why != "" {
			t.Fatalf("after the backoff of %s: %s", want, why)
		}
		l.failed(a, "other")
	}
	// A user name, from many addresses: known and unknown alike.
	for _, user := range []string{"pi-1", "nobody"} {
		for i := range 3 {
			src := netip.PrefixFrom(netip.AddrFrom4([4]byte{198, 51, 100, byte(i)}), 32)
			l.failed(src, user)
		}
		if why := l.throttled(c, user); !strings.Contains(why, "of this user") {
			t.Errorf("%s after 3 failures from 3 addresses: %q", user, why)
		}
		if why := l.throttled(c, user+"-not"); why != "" {
			t.Errorf("another user throttled: %q", why)
		}
	}
	// pi-1 logged in from b before: known there; its login does not
	// forget the failures of others elsewhere.
	if l.isKnown(b, "pi-1") {
		t.Fatal("known before any login")
	}
	l.succeeded(b, "pi-1")
	if !l.isKnown(b, "pi-1") || l.isKnown(c, "pi-1") || l.isKnown(b, "pi-2") {
		t.Error("known pairs wrong")
	}
	if why := l.throttled(c, "pi-1"); why == "" {
		t.Error("pi-1's login from its address let others try its password again")
	}
	// IPv6 by its /64.
	if sourceOf("[2001:db8::1]:1") != sourceOf("[2001:db8::ffff:2]:2") || sourceOf("[2001:db8:0:1::1]:1") == sourceOf("[2001:db8::1]:1") {
		t.Error("IPv6 sources not by /64")
	}
	if sourceOf("[::ffff:192.0.2.1]:1") != a {
		t.Error("an IPv4-mapped address not unmapped")
	}
}

// TestLoginChecksBounded: at most inFlight password checks run at once
// (one more for known pairs); a login that waits past queueWait is
// refused.
func TestLoginChecksBounded(t *testing.T) {
	l := newLogins(LoginLimits{InFlight: 2, QueueWait: 300 * time.Millisecond})
	var running, peak atomic.Int32
	verify := func() bool {
		n := running.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
		running.Add(-1)
		return true
	}
	var wg sync.WaitGroup
	var refused atomic.Int32
	for i := range 20 {
		wg.Go(func() {
			if _, ok := l.check(i%10 == 0, verify); !ok {
				refused.Add(1)
			}
		})
	}
	wg.Wait()
	if p := peak.Load(); p < 2 || p > 3 {
		t.Errorf("%d checks at once, want 2 (3 with the known pairs' own)", p)
	}
	// 20 checks of 50 ms, 2 or 3 at a time, within 300 ms: some wait too long.
	if r := refused.Load(); r == 0 || r == 20 {
		t.Errorf("%d of 20 refused for waiting", r)
	}
}

// bcryptAccounts are testAccounts with bcrypt hashes at the default cost.
func bcryptAccounts(t *testing.T) *Accounts {
	a := testAccounts(t)
	for i := range a.Devices {
		h, err := bcrypt.GenerateFromPassword([]byte(a.Devices[i].Password), bcrypt.DefaultCost)
		if err != nil {
			t.Fatal(err)
		}
		a.Devices[i].Password, a.Devices[i].PasswordBcrypt = "", string(h)
	}
	return a
}

// rawLogin sends a CONNECT from the loopback address from to addr and
// returns the CONNACK's return code and how long it took.
func rawLogin(t *testing.T, from, addr, client, user, pass string) (byte, time.Duration) {
	t.Helper()
	code, d, err := tryLogin(from, addr, client, user, pass)
	if err != nil {
		t.Fatalf("login of %s from %s: %v", user, from, err)
	}
	return code, d
}

func tryLogin(from, addr, client, user, pass string) (byte, time.Duration, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		return 0, 0, err
	}
	defer c.Close()
	pk := packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Connect}, ProtocolVersion: 4,
		Connect: packets.ConnectParams{ProtocolName: []byte("MQTT"), Clean: true, Keepalive: 60, ClientIdentifier: client,
			UsernameFlag: true, Username: []byte(user), PasswordFlag: true, Password: []byte(pass)}}
	var b bytes.Buffer
	if err := pk.ConnectEncode(&b); err != nil {
		return 0, 0, err
	}
	start := time.Now()
	if _, err := c.Write(b.Bytes()); err != nil {
		return 0, 0, err
	}
	var ack [4]byte
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(c, ack[:]); err != nil {
		return 0, 0, err
	}
	return ack[3], time.Since(start), nil
}

// TestLoginFloodOverSockets, with real sockets to the embedded broker and
// bcrypt accounts: an unknown user's refusal takes as long as a known
// user's (the dummy hash); past the free failures an address is refused
// without a bcrypt, and so is a user name tried from many addresses; a
// device that logged in before from its address still gets in.
func TestLoginFloodOverSockets(t *testing.T) {
	listen := testenv.FreeAddr(t)
	logs := startObserved(t, listen, bcryptAccounts(t), Limits{Logins: LoginLimits{FreeFailures: 4, Backoff: 30 * time.Second}})
	// pi-1 logs in from 127.0.0.1: its address is known from now on.
	if code, _ := rawLogin(t, "127.0.0.1", listen, "edgebench-lab-pi-1", "pi-1", "one"); code != 0 {
		t.Fatalf("pi-1's login: code %d", code)
	}
	// Known and unknown users, wrong passwords, from two addresses (two
	// failures each, within the free ones).
	var known, unknown []time.Duration
	for i := range 2 {
		code, d := rawLogin(t, "127.0.0.2", listen, "edgebench-lab-pi-2", "pi-2", "wrong")
		if code == 0 {
			t.Fatal("a wrong password accepted")
		}
		known = append(known, d)
		code, d = rawLogin(t, "127.0.0.3", listen, "x", "nobody-"+string(rune('a'+i)), "wrong")
		if code == 0 {
			t.Fatal("an unknown user accepted")
		}
		unknown = append(unknown, d)
	}
	slices.Sort(known)
	slices.Sort(unknown)
	if known[0] < 10*time.Millisecond {
		t.Fatalf("a bcrypt of the default cost took %s", known[0])
	}
	if unknown[1]*3 < known[0] {
		t.Errorf("an unknown user refused in %v, a known one in %v: the timing tells them apart", unknown, known)
	}
	// 127.0.0.4 tries pi-2 twice more: pi-2 is at 4 failures, throttled
	// from anywhere but an address it logged in from.
	for range 2 {
		rawLogin(t, "127.0.0.4", listen, "edgebench-lab-pi-2", "pi-2", "wrong")
	}
	if code, d := rawLogin(t, "127.0.0.5", listen, "edgebench-lab-pi-2", "pi-2", "two"); code == 0 || d > known[0]/2 {
		t.Errorf("pi-2 throttled, its right password from a new address: code %d in %s", code, d)
	}
	// 127.0.0.3 at 2 failures: two more, then refused without a bcrypt.
	for _, u := range []string{"a", "b"} {
		rawLogin(t, "127.0.0.3", listen, "x", u, "wrong")
	}
	if code, d := rawLogin(t, "127.0.0.3", listen, "x", "c", "wrong"); code == 0 || d > known[0]/2 {
		t.Errorf("a throttled address refused in %s (code %d), a bcrypt takes %s", d, code, known[0])
	}
	// pi-1 still gets in from its own address.
	for range 4 {
		rawLogin(t, "127.0.0.1", listen, "x", "pi-1", "wrong")
	}
	if code, _ := rawLogin(t, "127.0.0.1", listen, "edgebench-lab-pi-1", "pi-1", "one"); code != 0 {
		t.Errorf("pi-1 from its own address refused: code %d", code)
	}
	for _, want := range []string{"too many failed logins from this address", "too many failed logins of this user"} {
		if logs.FilterField(zap.String("reason", want)).Len() == 0 {
			t.Errorf("not logged: %s", want)
		}
	}
}

// TestLoginGateCrowded, with real sockets from many loopback addresses:
// one address cannot hold more than its share of the gate; a socket that
// sends nothing is closed at its silent time; and while a slowloris from
// 40 addresses keeps the gate full (each closed socket reopened), a
// device that retries gets in every time.
func TestLoginGateCrowded(t *testing.T) {
	listen := testenv.FreeAddr(t)
	logs := startObserved(t, listen, testAccounts(t), Limits{Pending: 16, PerSource: 4, Silent: time.Second, LoginWait: 4 * time.Second})
	dialFrom := func(from string) (net.Conn, error) {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		return d.Dial("tcp", listen)
	}
	// closedWithin reports whether the server closed c within d.
	closedWithin := func(c net.Conn, d time.Duration) bool {
		c.SetReadDeadline(time.Now().Add(d))
		_, err := c.Read(make([]byte, 1))
		var ne net.Error
		return !(errors.As(err, &ne) && ne.Timeout())
	}
	// 30 sockets from one address, one byte each: 4 stay.
	var open []net.Conn
	for range 30 {
		c, err := dialFrom("127.0.0.2")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write([]byte{0x10})
		open = append(open, c)
	}
	stayed := 0
	for _, c := range open {
		if !closedWithin(c, 300*time.Millisecond) {
			stayed++
		}
	}
	if stayed != 4 {
		t.Errorf("%d of 30 sockets from one address stayed in the gate, want 4", stayed)
	}
	// A silent one is closed at 1 s, not 4 s.
	quiet, err := dialFrom("127.0.0.3")
	if err != nil {
		t.Fatal(err)
	}
	defer quiet.Close()
	start := time.Now()
	if !closedWithin(quiet, 3*time.Second) {
		t.Error("a silent socket still open after 3 s")
	} else if d := time.Since(start); d < 800*time.Millisecond {
		t.Errorf("a silent socket closed after %s", d)
	}
	for _, c := range open {
		c.Close()
	}
	// The slowloris: 40 addresses, each keeping 2 sockets that sent half
	// a CONNECT header, reopened as soon as they are closed.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 40 {
		from := "127.0.1." + strconv.Itoa(i+1)
		for range 2 {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					c, err := dialFrom(from)
					if err != nil {
						time.Sleep(10 * time.Millisecond)
						continue
					}
					c.Write([]byte{0x10, 0xff})
					closedWithin(c, 10*time.Second)
					c.Close()
				}
			})
		}
	}
	defer func() { close(stop); wg.Wait() }()
	testenv.Until(t, "the gate full", func() bool {
		return logs.FilterField(zap.String("reason", "connection closed: 16 others have not logged in yet")).Len() > 0
	})
	firstTry := 0
	for i := range 20 {
		var code byte
		var err error
		for try := range 10 {
			code, _, err = tryLogin("127.0.0.1", listen, "edgebench-lab-pi-1", "pi-1", "one")
			if err == nil && code == 0 {
				if try == 0 {
					firstTry++
				}
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if err != nil || code != 0 {
			t.Errorf("login %d: not in after 10 tries: code %d, %v", i, code, err)
		}
	}
	t.Logf("during the slowloris, %d of 20 logins got in at the first try, all within 10", firstTry)
	if logs.FilterField(zap.String("reason", "connection closed: 4 others from this address have not logged in yet")).Len() == 0 {
		t.Error("the per-address cap not logged")
	}
}
