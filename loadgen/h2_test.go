package loadgen

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"reflect"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/edgebench/edgebench/loadgen/report"
)

// serverFrames builds what an HTTP/2 server sends, with x/net's Framer and
// hpack encoder: the oracle of the tests below.
type serverFrames struct {
	buf bytes.Buffer
	fr  *http2.Framer
	hb  bytes.Buffer
	enc *hpack.Encoder
}

func newServerFrames() *serverFrames {
	s := &serverFrames{}
	s.fr = http2.NewFramer(&s.buf, nil)
	s.enc = hpack.NewEncoder(&s.hb)
	return s
}

func (s *serverFrames) block(fields ...string) []byte {
	s.hb.Reset()
	for i := 0; i < len(fields); i += 2 {
		s.enc.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]})
	}
	return bytes.Clone(s.hb.Bytes())
}

// response sends a whole response on sid: HEADERS (split into
// CONTINUATION when asked), then the body in DATA frames of at most
// chunk bytes, padded when asked.
func (s *serverFrames) response(sid uint32, status string, body []byte, chunk int, split, pad bool) {
	b := s.block(":status", status, "server", "oracle/1", "content-type", "text/html", "content-length", "1")
	end := len(body) == 0
	if split && len(b) > 3 {
		s.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: sid, BlockFragment: b[:3], EndStream: end})
		s.fr.WriteContinuation(sid, true, b[3:])
	} else {
		s.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: sid, BlockFragment: b, EndStream: end, EndHeaders: true})
	}
	for len(body) > 0 {
		n := min(chunk, len(body))
		if pad {
			s.fr.WriteDataPadded(sid, n == len(body), body[:n], make([]byte, 3))
		} else {
			s.fr.WriteData(sid, n == len(body), body[:n])
		}
		body = body[n:]
	}
}

// TestH2FrameWalkMatchesFramer: nextFrame and unpad find the frames x/net's
// Framer reads, with the same type, flags, stream and payload.
func TestH2FrameWalkMatchesFramer(t *testing.T) {
	s := newServerFrames()
	s.fr.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 100})
	s.fr.WriteSettingsAck()
	s.fr.WritePing(false, [8]byte{1, 2, 3})
	s.fr.WriteWindowUpdate(0, 1000)
	s.fr.WriteWindowUpdate(3, 10)
	s.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 5, BlockFragment: []byte{0x88}, EndHeaders: true, PadLength: 4,
		Priority: http2.PriorityParam{StreamDep: 1, Weight: 7}})
	s.fr.WriteDataPadded(5, true, []byte("hello"), make([]byte, 10))
	s.fr.WriteRSTStream(7, http2.ErrCodeRefusedStream)
	s.fr.WriteGoAway(9, http2.ErrCodeNo, []byte("bye"))
	s.fr.WriteRawFrame(0x42, 0x3, 11, []byte("unknown type"))
	wire := s.buf.Bytes()

	oracle := http2.NewFramer(io.Discard, bytes.NewReader(wire))
	b := wire
	for i := 0; ; i++ {
		want, werr := oracle.ReadFrame()
		f, n, err := nextFrame(b)
		if werr != nil {
			if n != 0 || err != nil || len(b) != 0 {
				t.Fatalf("frame %d: the Framer is done (%v), the walk is not: %d %v, %d bytes left", i, werr, n, err, len(b))
			}
			return
		}
		h := want.Header()
		if err != nil || n != 9+int(h.Length) || f.typ != uint8(h.Type) || f.flags != uint8(h.Flags) || f.sid != h.StreamID {
			t.Fatalf("frame %d: walked %+v (%d, %v), Framer %v", i, f, n, err, h)
		}
		p, err := f.unpad()
		if err != nil {
			t.Fatal(err)
		}
		var wantP []byte
		switch w := want.(type) {
		case *http2.DataFrame:
			wantP = w.Data()
		case *http2.HeadersFrame:
			wantP = w.HeaderBlockFragment()
		default:
			wantP = f.p
		}
		if !bytes.Equal(p, wantP) {
			t.Fatalf("frame %d: payload %q, Framer %q", i, p, wantP)
		}
		b = b[n:]
	}
}

// h2Session is a client's view of one connection in a test: the client,
// what the server sent, and the events seen.
func newTestClient(slots int, body []byte) *h2Client {
	req := newH2Request(Config{Method: "GET", Body: body}, report.Target{Scheme: "http", Host: "127.0.0.1", Port: 8080, Path: "/x"})
	c := &h2Client{wantServer: true}
	c.init(&req, slots)
	return c
}

// events runs the client over wire, fed in pieces cut at the given
// points, and returns the events and the first error.
func feedSplit(c *h2Client, wire []byte, cuts []int) ([]h2Event, []h2Stream, error) {
	var evs []h2Event
	var done []h2Stream
	prev := 0
	for _, cut := range append(cuts, len(wire)) {
		if cut < prev || cut > len(wire) {
			continue
		}
		err := c.feed(wire[prev:cut])
		for _, e := range c.events {
			evs = append(evs, e)
			if e.kind != h2EvFirstByte {
				done = append(done, c.streams[e.slot])
			}
		}
		c.events = c.events[:0]
		if err != nil {
			return evs, done, err
		}
		prev = cut
	}
	return evs, done, nil
}

// TestH2ClientResponses: responses with bodies, padding, CONTINUATION,
// trailers and an interim 100 end as they should, read whole or cut at
// every byte.
func TestH2ClientResponses(t *testing.T) {
	s := newServerFrames()
	s.fr.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 2})
	s.response(1, "200", bytes.Repeat([]byte("a"), 40000), 16384, false, false)
	s.response(3, "404", []byte("nope"), 2, true, true)
	s.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 5, BlockFragment: s.block(":status", "100"), EndHeaders: true})
	s.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 5, BlockFragment: s.block(":status", "201"), EndHeaders: true})
	s.fr.WriteData(5, false, []byte("xy"))
	s.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 5, BlockFragment: s.block("trailer", "1"), EndHeaders: true, EndStream: true})
	s.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 7, BlockFragment: s.block(":status", "304"), EndHeaders: true, EndStream: true})
	s.fr.WritePing(false, [8]byte{9})
	wire := s.buf.Bytes()

	var want []h2Stream
	for _, step := range []int{0, 1, 7} {
		c := newTestClient(4, nil)
		for range 4 {
			if c.canOpen() {
				c.openStream()
			}
		}
		if c.open != 4 {
			t.Fatalf("%d streams open, want 4 before the server's SETTINGS", c.open)
		}
		var cuts []int
		for i := 1; step > 0 && i < len(wire); i += step {
			cuts = append(cuts, i)
		}
		evs, done, err := feedSplit(c, wire, cuts)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 8 || len(done) != 4 || c.open != 0 {
			t.Fatalf("cut every %d: %d events, %d done, %d open: %+v", step, len(evs), len(done), c.open, evs)
		}
		got := []int{done[0].status, done[1].status, done[2].status, done[3].status}
		bodies := []int64{done[0].body, done[1].body, done[2].body, done[3].body}
		if !reflect.DeepEqual(got, []int{200, 404, 201, 304}) || !reflect.DeepEqual(bodies, []int64{40000, 4, 2, 0}) {
			t.Fatalf("cut every %d: statuses %v bodies %v", step, got, bodies)
		}
		if string(c.server) != "oracle/1" {
			t.Errorf("server %q", c.server)
		}
		if want == nil {
			want = done
		} else if !reflect.DeepEqual(done, want) {
			t.Errorf("cut every %d: %+v, whole: %+v", step, done, want)
		}
		if c.canOpen() != true || c.maxStreams != 2 {
			t.Errorf("max streams %d", c.maxStreams)
		}
		// SETTINGS ack and PING ack queued after the preface.
		if !bytes.Contains(c.out, []byte{0, 0, 0, h2Settings, h2FlagAck, 0, 0, 0, 0}) ||
			!bytes.Contains(c.out, []byte{0, 0, 8, h2Ping, h2FlagAck, 0, 0, 0, 0, 9}) {
			t.Errorf("acks not queued")
		}
	}
}

// TestH2ClientGoAwayAndReset: a reset stream ends with its code; the
// streams above a GOAWAY's last stream are given back as not processed,
// and no stream opens after it.
func TestH2ClientGoAwayAndReset(t *testing.T) {
	s := newServerFrames()
	s.fr.WriteSettings()
	s.fr.WriteRSTStream(3, http2.ErrCodeRefusedStream)
	s.fr.WriteGoAway(5, http2.ErrCodeNo, nil)
	s.response(5, "200", []byte("ok"), 10, false, false)
	c := newTestClient(5, nil)
	for c.canOpen() {
		c.openStream()
	}
	evs, _, err := feedSplit(c, s.buf.Bytes(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []uint8
	for _, e := range evs {
		kinds = append(kinds, e.kind)
	}
	want := []uint8{h2EvReset, h2EvRefused, h2EvRefused, h2EvFirstByte, h2EvDone}
	if !reflect.DeepEqual(kinds, want) || evs[0].code != 7 {
		t.Fatalf("events %+v, want kinds %v and REFUSED_STREAM first", evs, want)
	}
	if c.canOpen() || c.open != 1 {
		t.Fatalf("after GOAWAY: can open %v, open %d (stream 1 below the last stream stays)", c.canOpen(), c.open)
	}
	if H2ErrorName(7) != "REFUSED_STREAM" || H2ErrorName(99) != "0x63" {
		t.Error(H2ErrorName(7), H2ErrorName(99))
	}
}

// TestH2ClientFlowControl: a request body goes out no faster than the
// server's windows allow, and the rest follows its WINDOW_UPDATEs; the
// client gives back the windows of what it receives.
func TestH2ClientFlowControl(t *testing.T) {
	body := bytes.Repeat([]byte("b"), 100000)
	c := newTestClient(2, body)
	c.openStream()
	c.openStream()
	sentData := func() (n int) {
		for b := bytes.TrimPrefix(c.out, []byte(h2Preface)); len(b) >= 9; {
			f, k, _ := nextFrame(b)
			if k == 0 {
				break
			}
			if f.typ == h2Data {
				n += len(f.p)
			}
			b = b[k:]
		}
		return n
	}
	if n := sentData(); n != h2DefaultWindow {
		t.Fatalf("%d body bytes before any update, want the connection's default window %d", n, h2DefaultWindow)
	}
	c.out = c.out[:0]
	s := newServerFrames()
	s.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 100000})
	s.fr.WriteWindowUpdate(0, 1000)
	if err := c.feed(s.buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	if n := sentData(); n != 1000 {
		t.Fatalf("%d bytes after a connection update of 1000", n)
	}
	c.out = c.out[:0]
	s.buf.Reset()
	s.fr.WriteWindowUpdate(0, 1<<20)
	if err := c.feed(s.buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	if n := sentData(); n != 2*100000-h2DefaultWindow-1000 {
		t.Fatalf("%d bytes after a large update, want the rest of both bodies", n)
	}
	if c.streams[0].bodySent != len(body) || c.streams[1].bodySent != len(body) {
		t.Fatal("bodies not all sent")
	}
	// Receiving: half the window used brings a WINDOW_UPDATE of it.
	c.out = c.out[:0]
	s.buf.Reset()
	chunk := make([]byte, h2FrameMax)
	for sent := 0; sent < h2Window/2; sent += len(chunk) {
		s.fr.WriteData(1, false, chunk)
	}
	if err := c.feed(s.buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	var updates []uint32
	for b := c.out; len(b) >= 9; {
		f, k, _ := nextFrame(b)
		if f.typ == h2WindowUpdate {
			updates = append(updates, f.sid)
		}
		b = b[k:]
	}
	if !reflect.DeepEqual(updates, []uint32{1, 0}) {
		t.Fatalf("window updates for streams %v, want the stream's and the connection's", updates)
	}
}

// TestH2ClientSaysNoH2: a server that answers the preface in HTTP/1.1,
// or with anything but SETTINGS, speaks no HTTP/2.
func TestH2ClientSaysNoH2(t *testing.T) {
	for _, wire := range [][]byte{
		[]byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"),
		{0, 0, 4, h2WindowUpdate, 0, 0, 0, 0, 0, 0, 0, 1, 0},
	} {
		c := newTestClient(1, nil)
		c.openStream()
		if err := c.feed(wire); !errors.Is(err, ErrNoH2) {
			t.Errorf("%q: %v, want ErrNoH2", wire, err)
		}
	}
}

// TestH2RequestBlocks: the first block indexes the fields, the steady one
// names them by index, the plain one indexes nothing; all decode to the
// same fields, and HTTP/1.1's connection headers are left out.
func TestH2RequestBlocks(t *testing.T) {
	cfg := Config{Method: "POST", Body: []byte("abc"), Headers: []report.Header{{Name: "Host", Value: "example.com"}, {Name: "X-Test", Value: "1"}, {Name: "Connection", Value: "close"}}}
	r := newH2Request(cfg, report.Target{Scheme: "https", Host: "127.0.0.1", Port: 443, Path: "/p?q=1"})
	d := hpack.NewDecoder(4096, nil)
	first, err := d.DecodeFull(r.first)
	if err != nil {
		t.Fatal(err)
	}
	steady, err := d.DecodeFull(r.steady)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := hpack.NewDecoder(0, nil).DecodeFull(r.plain)
	if err != nil {
		t.Fatal(err)
	}
	want := []hpack.HeaderField{{Name: ":method", Value: "POST"}, {Name: ":scheme", Value: "https"}, {Name: ":authority", Value: "example.com"},
		{Name: ":path", Value: "/p?q=1"}, {Name: "x-test", Value: "1"}, {Name: "content-length", Value: "3"}}
	for i, got := range [][]hpack.HeaderField{first, steady, plain} {
		for j := range got {
			got[j].Sensitive = false
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("block %d: %v", i, got)
		}
	}
	if len(r.steady) >= len(r.first) || len(r.steady) > 8 {
		t.Errorf("steady block of %d bytes, first %d", len(r.steady), len(r.first))
	}
}

// FuzzH2Feed: whatever a server sends, the client neither panics nor
// grows without bound, and the events do not depend on how the bytes
// were cut.
func FuzzH2Feed(f *testing.F) {
	s := newServerFrames()
	s.fr.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 2})
	s.response(1, "200", []byte("hello"), 2, true, true)
	s.fr.WriteRSTStream(3, http2.ErrCodeCancel)
	s.fr.WriteGoAway(1, http2.ErrCodeNo, nil)
	f.Add(s.buf.Bytes(), uint16(5))
	f.Add([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"), uint16(3))
	f.Add(append([]byte{0, 0, 0, h2Settings, 0, 0, 0, 0, 0}, 0, 0, 1, h2Headers, 0x8, 0, 0, 0, 1, 9), uint16(1))
	f.Fuzz(func(t *testing.T, wire []byte, step uint16) {
		run := func(cut int) ([]h2Event, []h2Stream, error) {
			c := newTestClient(3, []byte("body"))
			for c.canOpen() {
				c.openStream()
			}
			var cuts []int
			for i := cut; cut > 0 && i < len(wire); i += cut {
				cuts = append(cuts, i)
			}
			evs, done, err := feedSplit(c, wire, cuts)
			if len(c.in) > 9+h2FrameMax || len(c.hblock) > h2HeaderBlockMax {
				t.Fatalf("buffers grew to %d and %d bytes", len(c.in), len(c.hblock))
			}
			if c.open < 0 || c.open > 3 {
				t.Fatalf("%d streams open", c.open)
			}
			return evs, done, err
		}
		e1, d1, err1 := run(0)
		e2, d2, err2 := run(int(step%64) + 1)
		if (err1 == nil) != (err2 == nil) || !reflect.DeepEqual(e1, e2) || !reflect.DeepEqual(d1, d2) {
			t.Fatalf("whole: %v %+v %v; cut every %d: %v %+v %v", err1, e1, d1, step%64+1, err2, e2, d2)
		}
	})
}

// TestH2FeedRandomCuts feeds the fuzz seeds' kind of traffic, cut at
// random places, many times: the short version of FuzzH2Feed that runs
// with every test.
func TestH2FeedRandomCuts(t *testing.T) {
	s := newServerFrames()
	s.fr.WriteSettings()
	for sid := uint32(1); sid < 40; sid += 2 {
		s.response(sid, "200", bytes.Repeat([]byte("z"), int(sid)*100), 1000, sid%3 == 0, sid%5 == 0)
	}
	wire := s.buf.Bytes()
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		c := newTestClient(20, nil)
		for c.canOpen() {
			c.openStream()
		}
		var cuts []int
		for i := r.IntN(50) + 1; i < len(wire); i += r.IntN(200) + 1 {
			cuts = append(cuts, i)
		}
		_, done, err := feedSplit(c, wire, cuts)
		if err != nil || len(done) != 20 {
			t.Fatalf("%v, %d done", err, len(done))
		}
		for i, d := range done {
			if d.status != 200 || d.body != int64(2*i+1)*100 {
				t.Fatalf("stream %d: %+v", 2*i+1, d)
			}
		}
	}
}

// TestH2ControlFloodRefused: past h2MaxControl PING or SETTINGS frames
// acknowledged and not written (the engine resets the count when the
// socket took everything), the client refuses the next with ErrLimit;
// up to it, each is acknowledged.
func TestH2ControlFloodRefused(t *testing.T) {
	for _, settings := range []bool{false, true} {
		s := newServerFrames()
		s.fr.WriteSettings()
		for range h2MaxControl - 1 {
			if settings {
				s.fr.WriteSettings()
			} else {
				s.fr.WritePing(false, [8]byte{1})
			}
		}
		c := newTestClient(1, nil)
		c.out = c.out[:0]
		if err := c.feed(s.buf.Bytes()); err != nil {
			t.Fatalf("settings %v: %d acknowledgements: %v", settings, h2MaxControl, err)
		}
		if c.ctrl != h2MaxControl || len(c.out) == 0 {
			t.Fatalf("settings %v: %d acknowledgements counted, %d bytes queued", settings, c.ctrl, len(c.out))
		}
		s.buf.Reset()
		s.fr.WritePing(false, [8]byte{2})
		if err := c.feed(s.buf.Bytes()); !errors.Is(err, ErrLimit) {
			t.Errorf("settings %v: acknowledgement %d: %v, want ErrLimit", settings, h2MaxControl+1, err)
		}
	}
}
