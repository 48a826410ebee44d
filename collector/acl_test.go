package collector

import (
	"slices"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	mqtt "github.com/mochi-mqtt/server/v2"
	"go.uber.org/zap"

	"github.com/edgebench/edgebench/internal/testenv"
)

// aclCases are what a device account of fleet lab, id pi-2, may and may
// not read and write, as topic names (publish, read) and as subscription
// filters (read): exactly its own topics, never a look-alike, another
// fleet's or device's, a wildcard, a shared subscription or $SYS.
var aclCases = []struct {
	topic       string
	read, write bool
}{
	{prefix + "/lab/pi-2/status", false, true},
	{prefix + "/lab/pi-2/event", false, true},
	{prefix + "/lab/pi-2/result", false, true},
	{prefix + "/lab/pi-2/heartbeat", false, true},
	{prefix + "/lab/pi-2/cmd", true, false},
	{prefix + "/lab/pi-2/ack", true, false},
	{prefix + "/lab/_all/cmd", true, false},
	{prefix + "/collector/status", true, false},

	// another device, another fleet, another fleet's _all
	{prefix + "/lab/pi-1/cmd", false, false},
	{prefix + "/lab/pi-1/result", false, false},
	{prefix + "/lab/pi-1/ack", false, false},
	{prefix + "/other/pi-2/cmd", false, false},
	{prefix + "/other/pi-2/result", false, false},
	{prefix + "/other/_all/cmd", false, false},
	{prefix + "/labx/_all/cmd", false, false},
	{prefix + "/xlab/_all/cmd", false, false},
	{prefix + "/lab/_all/result", false, false},
	{prefix + "/lab/_all/ack", false, false},
	// look-alikes of its own topics
	{prefix + "/lab/pi-2/cmd/x", false, false},
	{prefix + "/lab/pi-2/resultx", false, false},
	{prefix + "/lab/pi-2/", false, false},
	{prefix + "/lab/pi-2", false, false},
	{prefix + "/lab/pi-22/cmd", false, false},
	{prefix + "/lab/xpi-2/cmd", false, false},
	{prefix + "/lab//pi-2/cmd", false, false},
	{"x/" + prefix + "/lab/pi-2/cmd", false, false},
	{prefix + "x/lab/pi-2/cmd", false, false},
	{"/" + prefix + "/lab/pi-2/cmd", false, false},
	{prefix + "/lab/pi-2/status/", false, false},
	{prefix + "/collector/status/x", false, false},
	{prefix + "/other/collector/status", false, false},
	// wildcards
	{"#", false, false},
	{prefix + "/#", false, false},
	{prefix + "/lab/#", false, false},
	{prefix + "/lab/pi-2/#", false, false},
	{prefix + "/lab/pi-2/+", false, false},
	{prefix + "/lab/+/cmd", false, false},
	{prefix + "/+/_all/cmd", false, false},
	{prefix + "/+/pi-2/cmd", false, false},
	{"+/" + prefix[len("edgebench/"):] + "/lab/pi-2/cmd", false, false},
	{prefix + "/+/+/+", false, false},
	{prefix + "/lab/_all/#", false, false},
	{prefix + "/lab/_all/+", false, false},
	{prefix + "/+/status", false, false},
	// shared subscriptions and $SYS
	{"$share/g/" + prefix + "/lab/pi-2/cmd", false, false},
	{"$share/g/" + prefix + "/lab/pi-1/cmd", false, false},
	{"$share/g/" + prefix + "/+/_all/cmd", false, false},
	{"$share/g/#", false, false},
	{"$SYS/#", false, false},
	{"$SYS/broker/clients/connected", false, false},
	{refusedWill, false, false},
}

// TestACLTable: the embedded broker's ACL hook answers each topic and
// filter of aclCases as the table says, for reading and for writing, and
// a Will is allowed exactly where a publish is. The collector's account
// may do everything; an unknown account nothing.
func TestACLTable(t *testing.T) {
	acc := testAccounts()
	if err := acc.check(); err != nil {
		t.Fatal(err)
	}
	r := newRefusals(zap.NewNop(), time.Minute)
	defer r.stop()
	h := newACLHook(acc, prefix, r)
	client := func(user string) *mqtt.Client {
		cl := &mqtt.Client{ID: "x"}
		cl.Properties.Username = []byte(user)
		return cl
	}
	pi2, col, stranger := client("pi-2"), client("collector"), client("pi-9")
	for _, tc := range aclCases {
		if got := h.OnACLCheck(pi2, tc.topic, false); got != tc.read {
			t.Errorf("pi-2 read %q: %v, want %v", tc.topic, got, tc.read)
		}
		if got := h.OnACLCheck(pi2, tc.topic, true); got != tc.write {
			t.Errorf("pi-2 write %q: %v, want %v", tc.topic, got, tc.write)
		}
		if got := h.mayPublish(pi2, tc.topic); got != tc.write {
			t.Errorf("pi-2 Will on %q: %v, want %v", tc.topic, got, tc.write)
		}
		if !h.OnACLCheck(col, tc.topic, false) || !h.OnACLCheck(col, tc.topic, true) {
			t.Errorf("the collector refused %q", tc.topic)
		}
		if h.OnACLCheck(stranger, tc.topic, false) || h.OnACLCheck(stranger, tc.topic, true) {
			t.Errorf("an unknown account allowed %q", tc.topic)
		}
	}
}

// TestACLSubscriptionsOnTheBroker: through a real embedded broker over
// TCP, a device's SUBSCRIBE is granted for exactly the filters the table
// lets it read, and refused (0x80) for the others: another fleet's _all,
// wildcards, shared subscriptions, $SYS.
func TestACLSubscriptionsOnTheBroker(t *testing.T) {
	listen := testenv.FreeAddr(t)
	col := startCollector(t, Config{DB: testenv.StoreDB(t, "sqlite"), Listen: listen, Accounts: testAccounts(), Web: "-"})
	defer col.Close()
	c, err := rawClient("tcp://"+listen, "edgebench-lab-pi-2", "pi-2", "two")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Disconnect(0)
	for _, tc := range aclCases {
		if !validFilter(tc.topic) {
			continue
		}
		tok := c.Subscribe(tc.topic, 1, nil)
		if !tok.WaitTimeout(10 * time.Second) {
			t.Fatalf("subscribe %q: no SUBACK", tc.topic)
		}
		// One filter, one code (paho keys a shared subscription's code
		// by the filter without its $share/group/).
		st, _ := tok.(*paho.SubscribeToken)
		if tok.Error() != nil || st == nil || len(st.Result()) != 1 {
			t.Fatalf("subscribe %q: %v %v", tc.topic, tok.Error(), st)
		}
		granted := false
		for _, code := range st.Result() {
			granted = code < 0x80
		}
		if granted != tc.read {
			t.Errorf("pi-2 subscribe %q granted %v, want %v", tc.topic, granted, tc.read)
		}
	}
}

// validFilter reports whether a filter is one a broker takes at all (a
// leading "/" or an empty level is valid MQTT; "#" must be last).
func validFilter(f string) bool {
	for i := 0; i < len(f); i++ {
		if f[i] == '#' && i != len(f)-1 {
			return false
		}
	}
	return f != ""
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
