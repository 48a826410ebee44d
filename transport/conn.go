package transport

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"

	mqtt "github.com/eclipse/paho.mqtt.golang"
	"github.com/eclipse/paho.mqtt.golang/packets"
	"go.uber.org/zap"
	"golang.org/x/net/proxy"

	"github.com/edgebench/edgebench/wire"
)

// MaxPacketSize caps the MQTT packets a Client reads, as the remaining
// length of the packet's fixed header: a result's DefaultMaxPayload and
// room for its topic. The payload of a larger PUBLISH is skipped as it
// arrives, in small reads, without being held in memory, and the message
// reaches its handler empty; any other larger packet ends the connection. The collector's embedded broker has the same cap.
const MaxPacketSize = wire.DefaultMaxPayload + 8<<10

// ErrLoginRefused wraps a broker's refusal of a login: bad user name or
// password, not authorised, or client id rejected.
var ErrLoginRefused = errors.New("the broker refused the login")

// dial opens the network connection to the broker for paho (tcp, or TLS
// for the TLS schemes, through the proxy of the environment as paho's own
// dialer does), reading it through a packet cap.
func (c *Client) dial(uri *url.URL, o mqtt.ClientOptions) (net.Conn, error) {
	d := proxy.FromEnvironmentUsing(&net.Dialer{Timeout: c.cfg.ConnectTimeout})
	conn, err := d.Dial("tcp", uri.Host)
	if err != nil {
		return nil, err
	}
	if c.tls != nil {
		tc := tls.Client(conn, c.tls)
		ctx, cancel := context.WithTimeout(context.Background(), c.cfg.ConnectTimeout)
		err := tc.HandshakeContext(ctx)
		cancel()
		if err != nil {
			conn.Close()
			return nil, err
		}
		conn = tc
	}
	return &cappedConn{Conn: conn, r: bufio.NewReaderSize(conn, 4096), max: MaxPacketSize, skipped: c.skippedPacket}, nil
}

// cappedConn passes MQTT packets through to paho, which allocates a
// packet's whole length before reading it, only when their remaining
// length is at most max. A larger PUBLISH reaches paho without its payload
// (topic and packet id kept, so paho acknowledges it and the broker does
// not send it again); its payload is read and dropped. Another larger
// packet is an error.
type cappedConn struct {
	net.Conn
	r       *bufio.Reader
	max     int
	skipped func(size int)

	hdr  [5]byte // the current packet's fixed header, when passed through
	out  []byte  // bytes for paho before the rest of the current packet
	left int     // bytes of the current packet's body paho has not read
}

func (c *cappedConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if len(c.out) == 0 && c.left == 0 {
		if err := c.next(); err != nil {
			return 0, err
		}
	}
	if len(c.out) > 0 {
		n := copy(p, c.out)
		c.out = c.out[n:]
		return n, nil
	}
	n, err := c.r.Read(p[:min(len(p), c.left)])
	c.left -= n
	return n, err
}

// next reads the next packet's fixed header, and the variable header of a
// PUBLISH over the cap.
func (c *cappedConn) next() error {
	typ, err := c.r.ReadByte()
	if err != nil {
		return err
	}
	c.hdr[0] = typ
	n, size, mult := 1, 0, 1
	for {
		b, err := c.r.ReadByte()
		if err != nil {
			return err
		}
		c.hdr[n] = b
		n++
		size += int(b&0x7f) * mult
		if b&0x80 == 0 {
			break
		}
		if n == len(c.hdr) {
			return fmt.Errorf("mqtt: malformed remaining length: %w", packets.ErrorProtocolViolation)
		}
		mult <<= 7
	}
	if size <= c.max {
		c.out, c.left = c.hdr[:n], size
		return nil
	}
	if typ>>4 != packets.Publish {
		return fmt.Errorf("mqtt: packet of type %d with %d bytes, over the cap of %d", typ>>4, size, c.max)
	}
	// Topic (a 2-byte length and the name) and, at QoS 1 and 2, the
	// packet id: what paho needs to acknowledge the message.
	var tl [2]byte
	if _, err := io.ReadFull(c.r, tl[:]); err != nil {
		return err
	}
	keep := 2 + int(binary.BigEndian.Uint16(tl[:]))
	if typ>>1&3 > 0 {
		keep += 2
	}
	if keep > size {
		return fmt.Errorf("mqtt: PUBLISH topic longer than the packet: %w", packets.ErrorProtocolViolation)
	}
	head := append(appendLength([]byte{typ}, keep), tl[:]...)
	out := append(head, make([]byte, keep-2)...)
	if _, err := io.ReadFull(c.r, out[len(head):]); err != nil {
		return err
	}
	if _, err := c.r.Discard(size - keep); err != nil {
		return err
	}
	c.out, c.left = out, 0
	if c.skipped != nil {
		c.skipped(size)
	}
	return nil
}

// appendLength appends n as an MQTT remaining length.
func appendLength(b []byte, n int) []byte {
	for {
		d := byte(n & 0x7f)
		n >>= 7
		if n == 0 {
			return append(b, d)
		}
		b = append(b, d|0x80)
	}
}

// skippedPacket counts and logs a packet over MaxPacketSize that was
// skipped unread.
func (c *Client) skippedPacket(size int) {
	n := c.skipped.Add(1)
	c.log.Warn("message over the size cap skipped", zap.Int("bytes", size), zap.Int("cap", MaxPacketSize), zap.Int64("skipped", n))
}

// Skipped is the number of messages skipped because they were over
// MaxPacketSize.
func (c *Client) Skipped() int64 { return c.skipped.Load() }
