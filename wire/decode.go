package wire

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/oklog/ulid/v2"
	"github.com/tinylib/msgp/msgp"
)

// DefaultMaxPayload is the size cap on a message: decoders refuse a larger
// payload before reading it, and PublishResult refuses to spool one.
const DefaultMaxPayload = 256 << 10

// maxDepth is the deepest nesting of maps and arrays a payload may have.
// The schema needs 8; unknown fields get some room for later additions.
const maxDepth = 16

// Errors the decoders return, wrapped with context.
var (
	ErrTooLarge  = errors.New("payload too large")
	ErrMalformed = errors.New("malformed payload")
	ErrVersion   = errors.New("unsupported schema version")
)

// NewID returns a new ULID: 26 characters, sortable by creation time. It
// names results and commands.
func NewID() string { return ulid.Make().String() }

// DecodeStatus decodes a status message (birth, will or offline).
func DecodeStatus(b []byte) (*Status, error) {
	var m Status
	if err := decode("status", b, DefaultMaxPayload, &m, &m.V); err != nil {
		return nil, err
	}
	switch m.State {
	case StatusOnline, StatusLost, StatusOffline:
	default:
		return nil, fmt.Errorf("decode status: state %q: %w", Clip(string(m.State)), ErrMalformed)
	}
	if m.Info != nil {
		for _, a := range m.Info.Addrs {
			if err := checkAddr(a); err != nil {
				return nil, fmt.Errorf("decode status: %w", err)
			}
		}
	}
	return &m, nil
}

// DecodeHeartbeat decodes a heartbeat.
func DecodeHeartbeat(b []byte) (*Heartbeat, error) {
	var m Heartbeat
	if err := decode("heartbeat", b, DefaultMaxPayload, &m, &m.V); err != nil {
		return nil, err
	}
	return &m, nil
}

// DecodeCommand decodes a command and checks its id, its kind and the
// bounds of a load test's HTTP/2 and TLS options (LoadTestSpec.check);
// expiry, replay, signature and the device's caps are the receiver's
// business.
func DecodeCommand(b []byte) (*Command, error) {
	var m Command
	if err := decode("command", b, DefaultMaxPayload, &m, &m.V); err != nil {
		return nil, err
	}
	if err := ValidMessageID(m.ID); err != nil {
		return nil, fmt.Errorf("decode command: %w", err)
	}
	switch m.Kind {
	case KindLoadTest, KindServe, KindProbe, KindCancel, KindInfo, KindCapacity, KindMark:
	default:
		return nil, fmt.Errorf("decode command %s: kind %q: %w", m.ID, m.Kind, ErrMalformed)
	}
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("decode command %s: %w", m.ID, err)
	}
	return &m, nil
}

// DecodeEvent decodes a command event.
func DecodeEvent(b []byte) (*Event, error) {
	var m Event
	if err := decode("event", b, DefaultMaxPayload, &m, &m.V); err != nil {
		return nil, err
	}
	if err := ValidMessageID(m.CommandID); err != nil {
		return nil, fmt.Errorf("decode event: command %w", err)
	}
	if !m.State.Known() {
		return nil, fmt.Errorf("decode event: state %q: %w", Clip(string(m.State)), ErrMalformed)
	}
	if m.ResultID != "" {
		if err := ValidMessageID(m.ResultID); err != nil {
			return nil, fmt.Errorf("decode event: result %w", err)
		}
	}
	if w := m.Window; w != nil {
		if w.Edge != MarkStart && w.Edge != MarkEnd {
			return nil, fmt.Errorf("decode event: window edge %q: want start or end: %w", Clip(w.Edge), ErrMalformed)
		}
		if w.Run < 0 || w.Run > MaxRun {
			return nil, fmt.Errorf("decode event: window of run %d: %w", w.Run, ErrMalformed)
		}
	}
	return &m, nil
}

// DecodeAck decodes a result acknowledgement.
func DecodeAck(b []byte) (*Ack, error) {
	var m Ack
	if err := decode("ack", b, DefaultMaxPayload, &m, &m.V); err != nil {
		return nil, err
	}
	if err := ValidMessageID(m.ResultID); err != nil {
		return nil, fmt.Errorf("decode ack: result %w", err)
	}
	return &m, nil
}

// DecodeResult decodes a result of at most DefaultMaxPayload bytes.
func DecodeResult(b []byte) (*Result, error) { return DecodeResultMax(b, DefaultMaxPayload) }

// DecodeResultMax decodes a result of at most max bytes. Besides its shape
// and ids, every index into its name tables, count and figure is checked
// (see Result.check): consumers may index and sum without checks of their
// own.
func DecodeResultMax(b []byte, max int) (*Result, error) {
	var m Result
	if err := decode("result", b, max, &m, &m.V); err != nil {
		return nil, err
	}
	if err := ValidMessageID(m.ID); err != nil {
		return nil, fmt.Errorf("decode result: %w", err)
	}
	if err := ValidID(m.Fleet); err != nil {
		return nil, fmt.Errorf("decode result %s: fleet: %w", m.ID, err)
	}
	if err := ValidID(m.Device); err != nil {
		return nil, fmt.Errorf("decode result %s: device: %w", m.ID, err)
	}
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("decode result %s: %w", m.ID, err)
	}
	return &m, nil
}

// ValidMessageID checks a result or command id: 1 to 64 ASCII letters,
// digits, '-' or '_' (a ULID is 26 of them). Ids name spool files, so
// nothing else is allowed.
func ValidMessageID(id string) error {
	if len(id) == 0 || len(id) > 64 {
		return fmt.Errorf("id %q: length %d not in 1..64: %w", Clip(id), len(id), ErrMalformed)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_') {
			return fmt.Errorf("id %q: byte %#x not allowed: %w", Clip(id), c, ErrMalformed)
		}
	}
	return nil
}

// Clip shortens a hostile string for an error message or a log line.
func Clip(s string) string {
	if len(s) > 70 {
		return s[:64] + "..."
	}
	return s
}

// decode is every decoder's common path: size cap, shape check, generated
// unmarshal with element limits, then the schema version.
func decode(name string, b []byte, max int, u msgp.Unmarshaler, v *int) error {
	if len(b) > max {
		return fmt.Errorf("decode %s: %d bytes, cap %d: %w", name, len(b), max, ErrTooLarge)
	}
	if err := checkShape(b); err != nil {
		return fmt.Errorf("decode %s: %w", name, err)
	}
	if _, err := u.UnmarshalMsg(b); err != nil {
		return fmt.Errorf("decode %s: %w: %w", name, ErrMalformed, err)
	}
	if *v != SchemaVersion {
		return fmt.Errorf("decode %s: v=%d, want %d: %w", name, *v, SchemaVersion, ErrVersion)
	}
	return nil
}

// checkShape walks a msgpack payload without allocating and fails unless
// it is exactly one well-formed object, nested at most maxDepth deep,
// whose every array and map really holds the elements its header claims.
// After it, no header can make the generated decoder allocate for more
// elements than the payload has bytes, and the decoder's msgp.Skip of
// unknown fields cannot recurse deeply.
func checkShape(b []byte) error {
	var pending [maxDepth + 1]uint64 // objects still to read at each depth
	depth := 0
	pending[0] = 1
	for {
		for depth >= 0 && pending[depth] == 0 {
			depth--
		}
		if depth < 0 {
			break
		}
		pending[depth]--
		skip, kids, err := objectHeader(b)
		if err != nil {
			return err
		}
		if uint64(len(b)) < skip {
			return fmt.Errorf("%w: object of %d bytes, %d left", ErrMalformed, skip, len(b))
		}
		b = b[skip:]
		if kids == 0 {
			continue
		}
		if kids > uint64(len(b)) {
			return fmt.Errorf("%w: %d elements claimed, %d bytes left", ErrMalformed, kids, len(b))
		}
		if depth == maxDepth {
			return fmt.Errorf("%w: nested deeper than %d", ErrMalformed, maxDepth)
		}
		depth++
		pending[depth] = kids
	}
	if len(b) != 0 {
		return fmt.Errorf("%w: %d bytes after the message", ErrMalformed, len(b))
	}
	return nil
}

// objectHeader reads the header of the msgpack object at b: how many bytes
// to skip (header plus any payload of a string, bin or ext) and how many
// objects follow as its elements (twice the entries of a map).
func objectHeader(b []byte) (skip, kids uint64, err error) {
	if len(b) == 0 {
		return 0, 0, fmt.Errorf("%w: %w", ErrMalformed, msgp.ErrShortBytes)
	}
	c := b[0]
	need := func(n int) error {
		if len(b) < n {
			return fmt.Errorf("%w: %w", ErrMalformed, msgp.ErrShortBytes)
		}
		return nil
	}
	switch {
	case c <= 0x7f || c >= 0xe0: // fixint
		return 1, 0, nil
	case c <= 0x8f: // fixmap
		return 1, 2 * uint64(c&0x0f), nil
	case c <= 0x9f: // fixarray
		return 1, uint64(c & 0x0f), nil
	case c <= 0xbf: // fixstr
		return 1 + uint64(c&0x1f), 0, nil
	}
	switch c {
	case 0xc0, 0xc2, 0xc3: // nil, false, true
		return 1, 0, nil
	case 0xcc, 0xd0:
		return 2, 0, nil
	case 0xcd, 0xd1:
		return 3, 0, nil
	case 0xca, 0xce, 0xd2:
		return 5, 0, nil
	case 0xcb, 0xcf, 0xd3:
		return 9, 0, nil
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext 1, 2, 4, 8, 16
		return 2 + 1<<(c-0xd4), 0, nil
	case 0xc4, 0xd9: // bin8, str8
		if err := need(2); err != nil {
			return 0, 0, err
		}
		return 2 + uint64(b[1]), 0, nil
	case 0xc5, 0xda: // bin16, str16
		if err := need(3); err != nil {
			return 0, 0, err
		}
		return 3 + uint64(binary.BigEndian.Uint16(b[1:])), 0, nil
	case 0xc6, 0xdb: // bin32, str32
		if err := need(5); err != nil {
			return 0, 0, err
		}
		return 5 + uint64(binary.BigEndian.Uint32(b[1:])), 0, nil
	case 0xc7: // ext8
		if err := need(2); err != nil {
			return 0, 0, err
		}
		return 3 + uint64(b[1]), 0, nil
	case 0xc8: // ext16
		if err := need(3); err != nil {
			return 0, 0, err
		}
		return 4 + uint64(binary.BigEndian.Uint16(b[1:])), 0, nil
	case 0xc9: // ext32
		if err := need(5); err != nil {
			return 0, 0, err
		}
		return 6 + uint64(binary.BigEndian.Uint32(b[1:])), 0, nil
	case 0xdc: // array16
		if err := need(3); err != nil {
			return 0, 0, err
		}
		return 3, uint64(binary.BigEndian.Uint16(b[1:])), nil
	case 0xdd: // array32
		if err := need(5); err != nil {
			return 0, 0, err
		}
		return 5, uint64(binary.BigEndian.Uint32(b[1:])), nil
	case 0xde: // map16
		if err := need(3); err != nil {
			return 0, 0, err
		}
		return 3, 2 * uint64(binary.BigEndian.Uint16(b[1:])), nil
	case 0xdf: // map32
		if err := need(5); err != nil {
			return 0, 0, err
		}
		return 5, 2 * uint64(binary.BigEndian.Uint32(b[1:])), nil
	}
	return 0, 0, fmt.Errorf("%w: invalid prefix %#x", ErrMalformed, c)
}

// signingDomain starts the bytes a command's signature covers, so that a
// signature of anything else never verifies as one.
const signingDomain = "edgebench command 2"

// SigningBytes is what a command's signature covers: the command sent to
// fleet and device (a device id, or "_all" for the fleet's broadcast, whose
// selector is in the command), as a msgpack array of a domain string, the
// fleet, the device and the command's msgpack with Sig cleared. Commands
// carry lists, not maps, so the same command always encodes to the same
// bytes. A command signed for one device or fleet does not verify on
// another's topic.
func (c *Command) SigningBytes(fleet, device string) ([]byte, error) {
	cc := *c
	cc.Sig = nil
	b := msgp.AppendArrayHeader(make([]byte, 0, cc.Msgsize()+len(signingDomain)+len(fleet)+len(device)+16), 4)
	b = msgp.AppendString(b, signingDomain)
	b = msgp.AppendString(b, fleet)
	b = msgp.AppendString(b, device)
	b, err := cc.MarshalMsg(b)
	if err != nil {
		return nil, fmt.Errorf("command %s signing bytes: %w", c.ID, err)
	}
	return b, nil
}

// Known reports whether s is one of the states of Event.
func (s EventState) Known() bool {
	switch s {
	case StateAccepted, StateRejected, StateRunning, StateSucceeded, StateFailed, StateCancelled, StateTimedOut:
		return true
	}
	return false
}

// Terminal reports whether no event follows s.
func (s EventState) Terminal() bool {
	switch s {
	case StateRejected, StateSucceeded, StateFailed, StateCancelled, StateTimedOut:
		return true
	}
	return false
}

// ValidTransition reports whether a command in state from (empty: no event
// yet) may move to state to. The state machine:
//
//	(none) -> accepted | rejected
//	accepted -> running | failed | cancelled | timed_out (a queued command)
//	running -> running (progress) | succeeded | failed | cancelled | timed_out
//
// rejected, succeeded, failed, cancelled and timed_out are terminal.
func ValidTransition(from, to EventState) bool {
	switch from {
	case "":
		return to == StateAccepted || to == StateRejected
	case StateAccepted:
		return to == StateRunning || to == StateFailed || to == StateCancelled || to == StateTimedOut
	case StateRunning:
		return to == StateRunning || to == StateSucceeded || to == StateFailed || to == StateCancelled || to == StateTimedOut
	}
	return false
}

// PeekID reads the "id" of a msgpack map that may not decode as a whole
// (a command or a result), so that its refusal can name it; "" when there
// is no valid id to read.
func PeekID(b []byte) string {
	n, rest, err := msgp.ReadMapHeaderBytes(b)
	if err != nil || n > 64 {
		return ""
	}
	for range n {
		var key []byte
		if key, rest, err = msgp.ReadMapKeyZC(rest); err != nil {
			return ""
		}
		if string(key) == "id" {
			id, _, err := msgp.ReadStringBytes(rest)
			if err != nil || ValidMessageID(id) != nil {
				return ""
			}
			return id
		}
		if rest, err = msgp.Skip(rest); err != nil {
			return ""
		}
	}
	return ""
}
