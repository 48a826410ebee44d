package wire

import (
	"errors"
	"fmt"
	"strings"
)

// DefaultPrefix is the first part of every topic unless configured.
const DefaultPrefix = "edgebench/v1"

// AllDevices is the reserved device id of a fleet's broadcast cmd topic.
const AllDevices = "_all"

// Kind is the last part of a topic: what it carries.
type Kind string

// The topic kinds of SPEC section 6.
const (
	TopicStatus    Kind = "status"
	TopicCmd       Kind = "cmd"
	TopicEvent     Kind = "event"
	TopicResult    Kind = "result"
	TopicAck       Kind = "ack"
	TopicHeartbeat Kind = "heartbeat"
)

// ErrTopic wraps every bad id, prefix or topic.
var ErrTopic = errors.New("invalid topic")

// ValidID checks a fleet or device id: 1 to 64 of [a-z0-9._-]. The
// reserved "_all" is refused too; Topic accepts it where it belongs.
func ValidID(id string) error {
	if id == AllDevices {
		return fmt.Errorf("id %q is reserved: %w", id, ErrTopic)
	}
	return validID(id)
}

func validID(id string) error {
	if len(id) == 0 || len(id) > 64 {
		return fmt.Errorf("id %q: length %d not in 1..64: %w", Clip(id), len(id), ErrTopic)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("id %q: byte %q not in [a-z0-9._-]: %w", Clip(id), c, ErrTopic)
		}
	}
	return nil
}

// ValidPrefix checks a topic prefix: non-empty levels separated by '/',
// without wildcards, '$' at the start, or leading and trailing slashes.
func ValidPrefix(p string) error {
	if p == "" || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || strings.HasPrefix(p, "$") {
		return fmt.Errorf("prefix %q: %w", p, ErrTopic)
	}
	if strings.ContainsAny(p, "+#\x00") || strings.Contains(p, "//") {
		return fmt.Errorf("prefix %q: wildcards or empty levels: %w", p, ErrTopic)
	}
	return nil
}

// Topics builds and parses topics under one prefix.
type Topics struct {
	Prefix string
}

// Topic is <prefix>/<fleet>/<device>/<kind>. device may be "_all" for the
// cmd kind only.
func (t Topics) Topic(fleet, device string, k Kind) (string, error) {
	if err := ValidPrefix(t.Prefix); err != nil {
		return "", err
	}
	if err := ValidID(fleet); err != nil {
		return "", fmt.Errorf("fleet: %w", err)
	}
	if device == AllDevices {
		if k != TopicCmd {
			return "", fmt.Errorf("device %q only has a cmd topic: %w", device, ErrTopic)
		}
	} else if err := ValidID(device); err != nil {
		return "", fmt.Errorf("device: %w", err)
	}
	if !k.known() {
		return "", fmt.Errorf("kind %q: %w", k, ErrTopic)
	}
	return t.Prefix + "/" + fleet + "/" + device + "/" + string(k), nil
}

// CollectorStatus is the topic of the collector's retained "online"
// status, <prefix>/collector/status: published by the collector each time
// it has (re)subscribed, read by every device, which then sends the
// results it holds again. It has two levels after the prefix, so no
// <fleet>/<device>/<kind> topic or filter is it.
func (t Topics) CollectorStatus() string { return t.Prefix + "/collector/status" }

// Filter is a subscription filter for one kind across devices: fleet and
// device may each be "+" for all. With a share group it is prefixed with
// $share/<group>/ so that several subscribers split the messages.
func (t Topics) Filter(fleet, device string, k Kind, group string) (string, error) {
	if err := ValidPrefix(t.Prefix); err != nil {
		return "", err
	}
	if fleet != "+" {
		if err := ValidID(fleet); err != nil {
			return "", fmt.Errorf("fleet: %w", err)
		}
	}
	if device != "+" && device != AllDevices {
		if err := ValidID(device); err != nil {
			return "", fmt.Errorf("device: %w", err)
		}
	}
	if !k.known() {
		return "", fmt.Errorf("kind %q: %w", k, ErrTopic)
	}
	f := t.Prefix + "/" + fleet + "/" + device + "/" + string(k)
	if group != "" {
		if err := validID(group); err != nil {
			return "", fmt.Errorf("share group: %w", err)
		}
		f = "$share/" + group + "/" + f
	}
	return f, nil
}

// Addr is a parsed topic.
type Addr struct {
	Fleet, Device string
	Kind          Kind
}

// Parse splits a topic under t's prefix into fleet, device and kind,
// checking each. Device is "_all" only for a broadcast cmd topic.
func (t Topics) Parse(topic string) (Addr, error) {
	rest, ok := strings.CutPrefix(topic, t.Prefix+"/")
	if !ok || t.Prefix == "" {
		return Addr{}, fmt.Errorf("topic %q: not under %q: %w", Clip(topic), t.Prefix, ErrTopic)
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 3 {
		return Addr{}, fmt.Errorf("topic %q: want <fleet>/<device>/<kind> after the prefix: %w", Clip(topic), ErrTopic)
	}
	a := Addr{Fleet: parts[0], Device: parts[1], Kind: Kind(parts[2])}
	if _, err := t.Topic(a.Fleet, a.Device, a.Kind); err != nil {
		return Addr{}, fmt.Errorf("topic %q: %w", Clip(topic), err)
	}
	return a, nil
}

func (k Kind) known() bool {
	switch k {
	case TopicStatus, TopicCmd, TopicEvent, TopicResult, TopicAck, TopicHeartbeat:
		return true
	}
	return false
}
