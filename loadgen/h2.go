package loadgen

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/net/http2/hpack"

	"github.com/edgebench/edgebench/loadgen/report"
)

// The HTTP/2 client (RFC 9113) the engine drives on each connection. It
// does no I/O: the engine feeds it what it reads and writes what it
// queues in out, after each batch of input, in one write. Frames are
// walked in place in the read buffer: x/net's Framer wants a blocking
// reader, loses a frame cut by a would-block, and allocates a Frame for
// each HEADERS, SETTINGS, WINDOW_UPDATE, PING, RST_STREAM and GOAWAY.
// Header blocks go to x/net's hpack decoder with its output off (the
// dynamic table is kept up to date; :status is read from the block's first
// field when the server indexes it, decoded otherwise). The request's
// header blocks are encoded once per load test.

// Frame types and flags.
const (
	h2Data         = 0x0
	h2Headers      = 0x1
	h2Priority     = 0x2
	h2RSTStream    = 0x3
	h2Settings     = 0x4
	h2PushPromise  = 0x5
	h2Ping         = 0x6
	h2GoAway       = 0x7
	h2WindowUpdate = 0x8
	h2Continuation = 0x9

	h2FlagEndStream  = 0x1
	h2FlagAck        = 0x1
	h2FlagEndHeaders = 0x4
	h2FlagPadded     = 0x8
	h2FlagPriority   = 0x20
)

// Settings.
const (
	h2SettingHeaderTableSize      = 0x1
	h2SettingEnablePush           = 0x2
	h2SettingMaxConcurrentStreams = 0x3
	h2SettingInitialWindowSize    = 0x4
	h2SettingMaxFrameSize         = 0x5
)

const (
	h2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
	// h2FrameMax is the largest frame payload accepted: the default of
	// SETTINGS_MAX_FRAME_SIZE, which this client does not raise.
	h2FrameMax = 16384
	// h2Window is the receive window of the connection and of each
	// stream, as h2load's -w 30 -W 30: the server never waits for
	// WINDOW_UPDATEs, and the client gives the window back once half of
	// it is used.
	h2Window = 1<<30 - 1
	// h2HeaderBlockMax bounds a header block spread over CONTINUATION
	// frames.
	h2HeaderBlockMax = 256 << 10
	h2DefaultWindow  = 65535
	// h2MaxControl bounds the PING and SETTINGS frames acknowledged and
	// not yet taken by the socket: a server that floods them and reads
	// nothing (CVE-2019-9512, CVE-2019-9515) has its connection closed
	// there, as x/net's server does past maxQueuedControlFrames.
	h2MaxControl = 10000
)

// Error codes, by name, for the report.
var h2ErrorNames = [...]string{"NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR",
	"SETTINGS_TIMEOUT", "STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL",
	"COMPRESSION_ERROR", "CONNECT_ERROR", "ENHANCE_YOUR_CALM", "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED"}

// H2ErrorName is the name of an HTTP/2 error code (RST_STREAM, GOAWAY).
func H2ErrorName(code uint32) string {
	if int(code) < len(h2ErrorNames) {
		return h2ErrorNames[code]
	}
	return "0x" + strconv.FormatUint(uint64(code), 16)
}

// h2Frame is one whole frame of a buffer.
type h2Frame struct {
	typ, flags uint8
	sid        uint32
	p          []byte // payload
}

var errH2FrameSize = errors.New("HTTP/2 frame larger than 16384 bytes (FRAME_SIZE_ERROR)")

// nextFrame splits the first whole frame off b; n is 0 when b holds none
// yet.
func nextFrame(b []byte) (f h2Frame, n int, err error) {
	if len(b) < 9 {
		return f, 0, nil
	}
	size := int(b[0])<<16 | int(b[1])<<8 | int(b[2])
	if size > h2FrameMax {
		return f, 0, errH2FrameSize
	}
	if len(b) < 9+size {
		return f, 0, nil
	}
	return h2Frame{typ: b[3], flags: b[4], sid: binary.BigEndian.Uint32(b[5:9]) & (1<<31 - 1), p: b[9 : 9+size]}, 9 + size, nil
}

var errH2Padding = errors.New("HTTP/2 padding longer than its frame (PROTOCOL_ERROR)")

// unpad strips the padding (and, in HEADERS, the priority) of a payload.
func (f h2Frame) unpad() ([]byte, error) {
	p := f.p
	if f.flags&h2FlagPadded != 0 && (f.typ == h2Data || f.typ == h2Headers) {
		if len(p) == 0 || int(p[0]) > len(p)-1 {
			return nil, errH2Padding
		}
		p = p[1 : len(p)-int(p[0])]
	}
	if f.typ == h2Headers && f.flags&h2FlagPriority != 0 {
		if len(p) < 5 {
			return nil, errH2Padding
		}
		p = p[5:]
	}
	return p, nil
}

func appendFrameHeader(b []byte, size int, typ, flags uint8, sid uint32) []byte {
	return append(b, byte(size>>16), byte(size>>8), byte(size), typ, flags, byte(sid>>24), byte(sid>>16), byte(sid>>8), byte(sid))
}

// h2Request is what each stream sends: its header blocks, encoded once,
// and its body.
type h2Request struct {
	// first is the block of a connection's first stream: its fields
	// enter the server's dynamic table, so that steady, the block of the
	// later streams, names them by index (a few bytes). plain indexes
	// nothing, for a server whose table is smaller than the default.
	first, steady, plain []byte
	body                 []byte
	// table is the dynamic table size the fields of first take.
	table uint32
}

// h2Skip are the request headers HTTP/2 forbids (connection-specific) or
// carries as pseudo-headers.
var h2Skip = []string{"host", "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te", "content-length"}

// newH2Request encodes the request of a load test.
func newH2Request(c Config, t report.Target) h2Request {
	authority := t.Host
	if strings.Contains(authority, ":") {
		authority = "[" + authority + "]"
	}
	if t.Port != defaultPort(t.Scheme) {
		authority += ":" + strconv.Itoa(t.Port)
	}
	fields := []hpack.HeaderField{{Name: ":method", Value: c.Method}, {Name: ":scheme", Value: t.Scheme},
		{Name: ":authority", Value: authority}, {Name: ":path", Value: t.Path}}
	for _, h := range c.Headers {
		name := strings.ToLower(h.Name)
		if name == "host" {
			fields[2].Value = h.Value
		}
		skip := false
		for _, s := range h2Skip {
			skip = skip || name == s
		}
		if !skip {
			fields = append(fields, hpack.HeaderField{Name: name, Value: h.Value})
		}
	}
	if len(c.Body) > 0 || c.Method == "POST" || c.Method == "PUT" || c.Method == "PATCH" {
		fields = append(fields, hpack.HeaderField{Name: "content-length", Value: strconv.Itoa(len(c.Body))})
	}
	var b bytes.Buffer
	enc := hpack.NewEncoder(&b)
	block := func() []byte {
		b.Reset()
		for _, f := range fields {
			enc.WriteField(f) // writes to a bytes.Buffer cannot fail
		}
		return bytes.Clone(b.Bytes())
	}
	r := h2Request{first: block(), steady: block(), body: c.Body}
	plain := hpack.NewEncoder(&b)
	plain.SetMaxDynamicTableSizeLimit(0)
	b.Reset()
	for _, f := range fields {
		plain.WriteField(f)
	}
	r.plain = bytes.Clone(b.Bytes())
	for _, f := range fields {
		r.table += f.Size()
	}
	return r
}

// h2Stream is one slot for a stream of a connection.
type h2Stream struct {
	sid      uint32 // 0: free
	status   int
	body     int64 // DATA payload received (padding excluded)
	bytes    int64 // frame bytes received, frame headers included
	head     int64 // HEADERS and CONTINUATION payload bytes (header blocks, as h2load counts them)
	sent     int64 // frame bytes sent
	bodySent int   // request body bytes sent
	window   int64 // what the server lets this stream send
	recv     int64 // DATA received since this stream's last WINDOW_UPDATE
	headers  bool  // a response HEADERS came (not 1xx)
}

// Events of h2Client.feed for the engine.
const (
	h2EvFirstByte = iota // the stream's first response frame came
	h2EvDone             // the stream's response ended (END_STREAM)
	h2EvReset            // the server reset the stream (code)
	h2EvRefused          // the stream was not processed (above a GOAWAY's last stream): safe to retry
)

type h2Event struct {
	kind uint8
	slot int
	code uint32
}

// h2Client is one connection's HTTP/2 state.
type h2Client struct {
	req     *h2Request
	out     []byte // frames to write
	in      []byte // a frame cut by the end of a read
	dec     *hpack.Decoder
	streams []h2Stream
	events  []h2Event
	nextSID uint32
	open    int // streams in flight

	// what the server said
	settings    bool   // its SETTINGS came: it speaks HTTP/2
	maxStreams  uint32 // SETTINGS_MAX_CONCURRENT_STREAMS
	initWindow  int64  // SETTINGS_INITIAL_WINDOW_SIZE: each new stream's send window
	maxFrame    int    // SETTINGS_MAX_FRAME_SIZE: largest DATA frame to send
	window      int64  // the connection's send window
	smallTable  bool   // its header table is smaller than the request's fields need
	sizeUpdate  bool   // the next block must say the table shrank
	goAway      bool
	lastSID     uint32
	goAwayCode  uint32
	recvWindow  int64 // DATA received since the connection's last WINDOW_UPDATE
	firstSent   bool
	pendingBody bool // some stream's body waits for window
	// ctrl counts the PING and SETTINGS acknowledgements queued since the
	// socket last took all the output (h2MaxControl).
	ctrl int

	// header block assembly (HEADERS then CONTINUATION)
	hblock   []byte
	hsid     uint32
	hend     bool
	hpending bool

	status     int    // the slow path's :status
	server     []byte // the Server header, when asked for
	wantServer bool
}

// init prepares c for a new connection with slots stream slots and
// queues the connection's preface: SETTINGS (no push, the receive window)
// and the connection's WINDOW_UPDATE.
func (c *h2Client) init(req *h2Request, slots int) {
	if len(c.streams) != slots {
		c.streams = make([]h2Stream, slots)
	}
	clear(c.streams)
	*c = h2Client{req: req, out: c.out[:0], in: c.in[:0], streams: c.streams, events: c.events[:0],
		hblock: c.hblock[:0], server: c.server[:0], wantServer: c.wantServer,
		nextSID: 1, maxStreams: 1<<32 - 1, initWindow: h2DefaultWindow, maxFrame: h2FrameMax, window: h2DefaultWindow}
	c.dec = hpack.NewDecoder(4096, c.emit)
	c.dec.SetEmitEnabled(false)
	c.dec.SetMaxStringLength(h2HeaderBlockMax)
	c.out = append(c.out, h2Preface...)
	c.out = appendFrameHeader(c.out, 12, h2Settings, 0, 0)
	c.out = binary.BigEndian.AppendUint16(c.out, h2SettingEnablePush)
	c.out = binary.BigEndian.AppendUint32(c.out, 0)
	c.out = binary.BigEndian.AppendUint16(c.out, h2SettingInitialWindowSize)
	c.out = binary.BigEndian.AppendUint32(c.out, h2Window)
	c.out = appendFrameHeader(c.out, 4, h2WindowUpdate, 0, 0)
	c.out = binary.BigEndian.AppendUint32(c.out, h2Window-h2DefaultWindow)
}

func (c *h2Client) emit(f hpack.HeaderField) {
	switch f.Name {
	case ":status":
		c.status, _ = strconv.Atoi(f.Value)
	case "server":
		c.server = append(c.server[:0], f.Value...)
	}
}

// canOpen reports whether a new stream may start now.
func (c *h2Client) canOpen() bool {
	return !c.goAway && c.open < len(c.streams) && uint32(c.open) < c.maxStreams
}

// openStream starts a request on a free slot and returns the slot;
// canOpen must have said yes.
func (c *h2Client) openStream() int {
	slot := 0
	for c.streams[slot].sid != 0 {
		slot++
	}
	s := &c.streams[slot]
	*s = h2Stream{sid: c.nextSID, window: c.initWindow}
	c.nextSID += 2
	c.open++
	block := c.req.steady
	switch {
	case c.smallTable:
		block = c.req.plain
	case !c.firstSent:
		block = c.req.first
		c.firstSent = true
	}
	flags := uint8(h2FlagEndHeaders)
	if len(c.req.body) == 0 {
		flags |= h2FlagEndStream
	}
	start := len(c.out)
	if c.sizeUpdate {
		// A dynamic table size update to 0 starts the block.
		c.out = appendFrameHeader(c.out, len(block)+1, h2Headers, flags, s.sid)
		c.out = append(c.out, 0x20)
		c.sizeUpdate = false
	} else {
		c.out = appendFrameHeader(c.out, len(block), h2Headers, flags, s.sid)
	}
	c.out = append(c.out, block...)
	s.sent = int64(len(c.out) - start)
	if len(c.req.body) > 0 {
		c.pendingBody = true
		c.pump()
	}
	return slot
}

// pump sends the request bodies waiting for room in the flow-control
// windows.
func (c *h2Client) pump() {
	if !c.pendingBody {
		return
	}
	c.pendingBody = false
	body := c.req.body
	for i := range c.streams {
		s := &c.streams[i]
		if s.sid == 0 || s.bodySent == len(body) {
			continue
		}
		for s.bodySent < len(body) {
			n := min(len(body)-s.bodySent, c.maxFrame, int(min(s.window, c.window)))
			if n <= 0 {
				c.pendingBody = true
				break
			}
			flags := uint8(0)
			if s.bodySent+n == len(body) {
				flags = h2FlagEndStream
			}
			c.out = appendFrameHeader(c.out, n, h2Data, flags, s.sid)
			c.out = append(c.out, body[s.bodySent:s.bodySent+n]...)
			s.bodySent += n
			s.window -= int64(n)
			c.window -= int64(n)
			s.sent += int64(9 + n)
		}
	}
}

// find returns the slot of a stream in flight, or -1.
func (c *h2Client) find(sid uint32) int {
	if sid == 0 {
		return -1
	}
	for i := range c.streams {
		if c.streams[i].sid == sid {
			return i
		}
	}
	return -1
}

// end frees a stream's slot and notes the event; the slot's figures stay
// until openStream reuses it.
func (c *h2Client) end(slot int, kind uint8, code uint32) {
	c.events = append(c.events, h2Event{kind: kind, slot: slot, code: code})
	c.streams[slot].sid = 0
	c.open--
}

// ErrH2Protocol is a server that broke the HTTP/2 protocol.
var ErrH2Protocol = errors.New("HTTP/2 protocol error")

var errH2Flood = fmt.Errorf("%w: %w: over %d PING and SETTINGS frames to acknowledge while the server reads nothing (ENHANCE_YOUR_CALM)",
	ErrH2Protocol, ErrLimit, h2MaxControl)

func h2Err(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrH2Protocol, fmt.Sprintf(format, a...))
}

// feed handles the bytes read from the connection: every whole frame is
// acted on (acks and window updates queued in out, events appended for
// the engine), a frame cut short is kept for the next feed. An error is
// the connection's: it must be closed.
func (c *h2Client) feed(b []byte) error {
	if len(c.in) > 0 {
		c.in = append(c.in, b...)
		b = c.in
	}
	for {
		f, n, err := nextFrame(b)
		if err != nil {
			return c.noH2(b, err)
		}
		if n == 0 {
			break
		}
		if err := c.frame(f); err != nil {
			return c.noH2(b, err)
		}
		b = b[n:]
	}
	if !c.settings && len(b) >= 9 && b[3] != h2Settings {
		return c.noH2(b, h2Err("the first frame is not SETTINGS"))
	}
	// Keep the cut frame: copied to the front of in, whose bytes were
	// all used.
	c.in = append(c.in[:0], b...)
	if c.recvWindow >= h2Window/2 {
		c.out = appendFrameHeader(c.out, 4, h2WindowUpdate, 0, 0)
		c.out = binary.BigEndian.AppendUint32(c.out, uint32(c.recvWindow))
		c.recvWindow = 0
	}
	c.pump()
	return nil
}

// noH2 says a server that never sent SETTINGS speaks no HTTP/2 (an
// HTTP/1.x server answers the preface with a 400), else returns err.
func (c *h2Client) noH2(b []byte, err error) error {
	if c.settings {
		return err
	}
	if bytes.HasPrefix(b, []byte("HTTP/1.")) {
		return fmt.Errorf("%w: it answered in HTTP/1.x (leave out --h2c for HTTP/1.1)", ErrNoH2)
	}
	return fmt.Errorf("%w: %v", ErrNoH2, err)
}

// frame acts on one frame.
func (c *h2Client) frame(f h2Frame) error {
	if c.hpending && f.typ != h2Continuation {
		return h2Err("frame of type %d inside a header block", f.typ)
	}
	if !c.settings && f.typ != h2Settings {
		return h2Err("the first frame is not SETTINGS")
	}
	switch f.typ {
	case h2Data:
		c.recvWindow += int64(len(f.p))
		slot := c.find(f.sid)
		if slot < 0 {
			return nil // a stream already reset or given up
		}
		p, err := f.unpad()
		if err != nil {
			return err
		}
		s := &c.streams[slot]
		s.bytes += int64(9 + len(f.p))
		s.body += int64(len(p))
		s.recv += int64(len(f.p))
		if f.flags&h2FlagEndStream != 0 {
			c.end(slot, h2EvDone, 0)
		} else if s.recv >= h2Window/2 {
			c.out = appendFrameHeader(c.out, 4, h2WindowUpdate, 0, s.sid)
			c.out = binary.BigEndian.AppendUint32(c.out, uint32(s.recv))
			s.recv = 0
		}
	case h2Headers, h2Continuation:
		return c.headers(f)
	case h2Priority:
	case h2RSTStream:
		if len(f.p) != 4 {
			return h2Err("RST_STREAM of %d bytes", len(f.p))
		}
		if slot := c.find(f.sid); slot >= 0 {
			c.end(slot, h2EvReset, binary.BigEndian.Uint32(f.p))
		}
	case h2Settings:
		return c.settingsFrame(f)
	case h2PushPromise:
		return h2Err("PUSH_PROMISE with push disabled")
	case h2Ping:
		if len(f.p) != 8 {
			return h2Err("PING of %d bytes", len(f.p))
		}
		if f.flags&h2FlagAck == 0 {
			if err := c.ack(); err != nil {
				return err
			}
			c.out = appendFrameHeader(c.out, 8, h2Ping, h2FlagAck, 0)
			c.out = append(c.out, f.p...)
		}
	case h2GoAway:
		if len(f.p) < 8 {
			return h2Err("GOAWAY of %d bytes", len(f.p))
		}
		last := binary.BigEndian.Uint32(f.p) & (1<<31 - 1)
		if !c.goAway || last < c.lastSID {
			c.lastSID = last
		}
		c.goAway, c.goAwayCode = true, binary.BigEndian.Uint32(f.p[4:])
		for i := range c.streams {
			if sid := c.streams[i].sid; sid != 0 && sid > c.lastSID {
				c.end(i, h2EvRefused, c.goAwayCode)
			}
		}
	case h2WindowUpdate:
		if len(f.p) != 4 {
			return h2Err("WINDOW_UPDATE of %d bytes", len(f.p))
		}
		inc := int64(binary.BigEndian.Uint32(f.p) & (1<<31 - 1))
		if f.sid == 0 {
			c.window += inc
		} else if slot := c.find(f.sid); slot >= 0 {
			if c.streams[slot].window += inc; c.streams[slot].window > 1<<31-1 {
				return h2Err("stream window over 2^31-1 (FLOW_CONTROL_ERROR)")
			}
		}
		if c.window > 1<<31-1 {
			return h2Err("window over 2^31-1 (FLOW_CONTROL_ERROR)")
		}
		c.pendingBody = len(c.req.body) > 0
	}
	return nil
}

func (c *h2Client) settingsFrame(f h2Frame) error {
	if f.sid != 0 || len(f.p)%6 != 0 {
		return h2Err("malformed SETTINGS")
	}
	if f.flags&h2FlagAck != 0 {
		return nil
	}
	c.settings = true
	for p := f.p; len(p) >= 6; p = p[6:] {
		v := binary.BigEndian.Uint32(p[2:])
		switch binary.BigEndian.Uint16(p) {
		case h2SettingHeaderTableSize:
			if v < c.req.table && !c.smallTable {
				c.smallTable, c.sizeUpdate = true, c.firstSent
			}
		case h2SettingMaxConcurrentStreams:
			c.maxStreams = v
		case h2SettingInitialWindowSize:
			if v > 1<<31-1 {
				return h2Err("initial window over 2^31-1")
			}
			// The change applies to the streams in flight too.
			for i := range c.streams {
				if c.streams[i].sid != 0 {
					c.streams[i].window += int64(v) - c.initWindow
				}
			}
			c.initWindow = int64(v)
			c.pendingBody = len(c.req.body) > 0
		case h2SettingMaxFrameSize:
			if v < h2FrameMax || v > 1<<24-1 {
				return h2Err("max frame size %d", v)
			}
			c.maxFrame = int(v)
		}
	}
	if err := c.ack(); err != nil {
		return err
	}
	c.out = appendFrameHeader(c.out, 0, h2Settings, h2FlagAck, 0)
	return nil
}

// ack counts an acknowledgement (of a PING or SETTINGS) about to be
// queued; past h2MaxControl of them unwritten, the server floods.
func (c *h2Client) ack() error {
	if c.ctrl++; c.ctrl > h2MaxControl {
		return errH2Flood
	}
	return nil
}

// headers handles a HEADERS or CONTINUATION frame.
func (c *h2Client) headers(f h2Frame) error {
	p := f.p
	if f.typ == h2Headers {
		if c.hpending {
			return h2Err("HEADERS inside a header block")
		}
		var err error
		if p, err = f.unpad(); err != nil {
			return err
		}
		c.hsid, c.hend = f.sid, f.flags&h2FlagEndStream != 0
	} else if !c.hpending || f.sid != c.hsid {
		return h2Err("CONTINUATION without HEADERS")
	}
	slot := c.find(c.hsid)
	if slot >= 0 {
		c.streams[slot].bytes += int64(9 + len(f.p))
		c.streams[slot].head += int64(len(f.p))
	}
	if f.flags&h2FlagEndHeaders == 0 || c.hpending {
		if len(c.hblock)+len(p) > h2HeaderBlockMax {
			return fmt.Errorf("%w: %w: header block over %d bytes", ErrH2Protocol, ErrLimit, h2HeaderBlockMax)
		}
		c.hblock = append(c.hblock, p...)
		c.hpending = f.flags&h2FlagEndHeaders == 0
		if c.hpending {
			return nil
		}
		p = c.hblock
	}
	status := staticStatus(p)
	slow := status == 0 || (c.wantServer && len(c.server) == 0)
	if slow {
		c.status = 0
		c.dec.SetEmitEnabled(true)
	}
	_, err := c.dec.Write(p)
	if err == nil {
		err = c.dec.Close()
	}
	if slow {
		c.dec.SetEmitEnabled(false)
		if status == 0 {
			status = c.status
		}
	}
	c.hblock = c.hblock[:0]
	if err != nil {
		return h2Err("header block: %v (COMPRESSION_ERROR)", err)
	}
	if slot < 0 {
		return nil
	}
	s := &c.streams[slot]
	if !s.headers {
		if status >= 100 && status < 200 {
			return nil // an interim response: the real one follows
		}
		c.events = append(c.events, h2Event{kind: h2EvFirstByte, slot: slot})
		s.headers, s.status = true, status
	}
	if c.hend {
		c.end(slot, h2EvDone, 0)
	}
	return nil
}

// staticStatus reads :status from a block that starts with an indexed
// field of the static table (8..14: 200 204 206 304 400 404 500); 0
// otherwise.
func staticStatus(b []byte) int {
	if len(b) == 0 || b[0]&0x80 == 0 {
		return 0
	}
	switch b[0] & 0x7f {
	case 8:
		return 200
	case 9:
		return 204
	case 10:
		return 206
	case 11:
		return 304
	case 12:
		return 400
	case 13:
		return 404
	case 14:
		return 500
	}
	return 0
}
