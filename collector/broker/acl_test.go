package broker

import (
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
	acc := testAccounts(t)
	r := newRefusals(zap.NewNop(), time.Minute, nil)
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
	startObserved(t, listen, testAccounts(t), Limits{})
	c, err := testenv.MQTTClient("tcp://"+listen, "edgebench-lab-pi-2", "pi-2", "two")
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
