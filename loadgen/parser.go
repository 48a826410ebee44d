package loadgen

import (
	"bytes"
	"errors"
	"fmt"
)

// Parser states.
const (
	psStatus = iota
	psHeaders
	psBody       // Content-Length body: remaining bytes
	psChunkSize  // chunk-size line
	psChunkData  // chunk data: remaining bytes
	psChunkEnd   // the CRLF after chunk data
	psTrailers   // trailer lines after the last chunk
	psUntilClose // no length: the body ends when the server closes
	psDone
)

// maxLine bounds a status, header or chunk-size line carried across reads.
const maxLine = 16 << 10

// maxHeaderBlock bounds the header block of a response (its status line,
// header lines and trailers, and those of every interim 1xx response
// before it), as HTTP/2's header block is bounded (h2HeaderBlockMax): a
// server that streams header lines for ever is cut there.
const maxHeaderBlock = 256 << 10

// ErrLimit is a server that pushed the client past a bound on what it
// keeps for one connection: the connection is closed and its requests
// are counted in report.Errors.Limit.
var ErrLimit = errors.New("the server went past a limit of the client")

var (
	errBadStatus   = errors.New("malformed status line")
	errBadHeader   = errors.New("malformed header")
	errBadLength   = errors.New("malformed Content-Length")
	errBadChunk    = errors.New("malformed chunk")
	errLineTooLong = errors.New("header line too long")
	errHeaderBlock = fmt.Errorf("%w: response header block over %d bytes", ErrLimit, maxHeaderBlock)
)

// respParser is an incremental HTTP/1.x response parser. It is fed the bytes
// of one response as they arrive, keeps no body, and allocates only when a
// line is split across reads (its carry buffer grows once, then is reused).
type respParser struct {
	state      int
	line       []byte // a line split across reads
	remaining  int64  // body or chunk bytes still to come
	head       int    // header block bytes of this response so far, interim responses' included (maxHeaderBlock)
	status     int
	http10     bool
	chunked    bool
	close      bool // the connection closes after this response
	keepAlive  bool // HTTP/1.0 "Connection: keep-alive"
	length     int64
	body       int64 // body bytes received
	headOnly   bool  // the request was HEAD: no body whatever the headers say
	server     []byte
	wantServer bool // copy the Server header (only the first response needs it)
}

// reset prepares the parser for the next response.
func (p *respParser) reset(headOnly, wantServer bool) {
	line := p.line[:0]
	*p = respParser{line: line, length: -1, headOnly: headOnly, wantServer: wantServer}
}

// done reports whether a whole response has been parsed.
func (p *respParser) done() bool { return p.state == psDone }

// reuse reports whether the connection may carry another request.
func (p *respParser) reuse() bool {
	if p.close {
		return false
	}
	if p.http10 {
		return p.keepAlive
	}
	return true
}

// feed parses b and returns how many bytes it consumed. When the response is
// done before the end of b, the rest is left unconsumed.
func (p *respParser) feed(b []byte) (int, error) {
	n := 0
	for n < len(b) && p.state != psDone {
		switch p.state {
		case psBody, psChunkData, psUntilClose:
			take := int64(len(b) - n)
			if p.state != psUntilClose && take > p.remaining {
				take = p.remaining
			}
			n += int(take)
			p.body += take
			if p.state == psUntilClose {
				continue
			}
			p.remaining -= take
			if p.remaining == 0 {
				if p.state == psBody {
					p.state = psDone
				} else {
					p.state = psChunkEnd
				}
			}
		default:
			line, used, ok, err := p.nextLine(b[n:])
			n += used
			if err != nil {
				return n, err
			}
			if p.state == psStatus || p.state == psHeaders || p.state == psTrailers {
				if p.head += used; p.head > maxHeaderBlock {
					return n, errHeaderBlock
				}
			}
			if !ok {
				return n, nil
			}
			if err := p.onLine(line); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// nextLine returns the next whole line (without CR LF) from b, joined with
// any part carried from the previous read.
func (p *respParser) nextLine(b []byte) (line []byte, used int, ok bool, err error) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		if len(p.line)+len(b) > maxLine {
			return nil, len(b), false, errLineTooLong
		}
		p.line = append(p.line, b...)
		return nil, len(b), false, nil
	}
	if len(p.line) > 0 {
		if len(p.line)+i > maxLine {
			return nil, i + 1, false, errLineTooLong
		}
		p.line = append(p.line, b[:i]...)
		line = p.line
		p.line = p.line[:0]
	} else {
		line = b[:i]
	}
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	return line, i + 1, true, nil
}

func (p *respParser) onLine(line []byte) error {
	switch p.state {
	case psStatus:
		return p.onStatus(line)
	case psHeaders:
		if len(line) == 0 {
			return p.onHeadersEnd()
		}
		return p.onHeader(line)
	case psChunkSize:
		size, err := parseChunkSize(line)
		if err != nil {
			return err
		}
		if size == 0 {
			p.state = psTrailers
		} else {
			p.remaining = size
			p.state = psChunkData
		}
	case psChunkEnd:
		if len(line) != 0 {
			return errBadChunk
		}
		p.state = psChunkSize
	case psTrailers:
		if len(line) == 0 {
			p.state = psDone
		}
	}
	return nil
}

// onStatus parses "HTTP/1.1 200 OK".
func (p *respParser) onStatus(line []byte) error {
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return errBadStatus
	}
	switch line[7] {
	case '0':
		p.http10 = true
	case '1':
	default:
		return errBadStatus
	}
	code := 0
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return errBadStatus
		}
		code = code*10 + int(c-'0')
	}
	if len(line) > 12 && line[12] != ' ' {
		return errBadStatus
	}
	p.status = code
	p.state = psHeaders
	return nil
}

func (p *respParser) onHeader(line []byte) error {
	colon := bytes.IndexByte(line, ':')
	if colon <= 0 {
		return errBadHeader
	}
	name, value := line[:colon], bytes.TrimSpace(line[colon+1:])
	switch len(name) {
	case 6:
		if p.wantServer && asciiEqualFold(name, "server") {
			p.server = append(p.server[:0], value...)
		}
	case 10:
		if asciiEqualFold(name, "connection") {
			p.onConnection(value)
		}
	case 14:
		if asciiEqualFold(name, "content-length") {
			n, ok := parseDecimal(value)
			if !ok || (p.length >= 0 && p.length != n) {
				return errBadLength
			}
			p.length = n
		}
	case 17:
		if asciiEqualFold(name, "transfer-encoding") {
			// Only chunked matters to framing; it must come last.
			p.chunked = len(value) >= 7 && asciiEqualFold(value[len(value)-7:], "chunked")
		}
	}
	return nil
}

// onConnection reads the tokens of a Connection header.
func (p *respParser) onConnection(v []byte) {
	for len(v) > 0 {
		var tok []byte
		if i := bytes.IndexByte(v, ','); i >= 0 {
			tok, v = bytes.TrimSpace(v[:i]), v[i+1:]
		} else {
			tok, v = bytes.TrimSpace(v), nil
		}
		switch {
		case asciiEqualFold(tok, "close"):
			p.close = true
		case asciiEqualFold(tok, "keep-alive"):
			p.keepAlive = true
		}
	}
}

func (p *respParser) onHeadersEnd() error {
	switch {
	case p.status >= 100 && p.status < 200 && p.status != 101:
		// An interim response: the real one follows.
		head, want, server, block := p.headOnly, p.wantServer, p.server, p.head
		p.reset(head, want)
		p.server, p.head = server, block
		return nil
	case p.headOnly || p.status == 204 || p.status == 304 || p.status == 101:
		p.state = psDone
	case p.chunked:
		p.state = psChunkSize
	case p.length == 0:
		p.state = psDone
	case p.length > 0:
		p.remaining = p.length
		p.state = psBody
	default:
		p.state = psUntilClose
		p.close = true
	}
	return nil
}

// eof tells the parser the server closed the connection. It reports whether
// that completed the response (a body delimited by the close).
func (p *respParser) eof() bool {
	if p.state == psUntilClose {
		p.state = psDone
		return true
	}
	return p.state == psDone
}

func parseChunkSize(line []byte) (int64, error) {
	if i := bytes.IndexByte(line, ';'); i >= 0 {
		line = line[:i]
	}
	line = bytes.TrimSpace(line)
	if len(line) == 0 || len(line) > 15 {
		return 0, errBadChunk
	}
	var n int64
	for _, c := range line {
		switch {
		case c >= '0' && c <= '9':
			n = n<<4 | int64(c-'0')
		case c >= 'a' && c <= 'f':
			n = n<<4 | int64(c-'a'+10)
		case c >= 'A' && c <= 'F':
			n = n<<4 | int64(c-'A'+10)
		default:
			return 0, errBadChunk
		}
	}
	return n, nil
}

func parseDecimal(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// asciiEqualFold compares b with the lower-case ASCII string s, ignoring case.
func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		c := b[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}
