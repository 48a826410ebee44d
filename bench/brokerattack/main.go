// Command brokerattack does to the collector's embedded broker what a
// stranger or a stolen device's account can, for bench/broker-memory.sh to
// measure the collector's memory meanwhile. It holds its sockets open for
// --hold and prints how many the broker closed.
//
//	brokerattack -attack claim   -n 8 -size 268435455         # CONNECTs announcing 256 MiB, nothing follows
//	brokerattack -attack claim   -n 8 -size 268435455 -bytes  # ... and the bytes follow
//	brokerattack -attack claim   -n 200 -size 16000 -bytes -slow # the largest CONNECT allowed, a byte a second
//	brokerattack -attack idle    -n 1000                      # TCP connections that never send CONNECT
//	brokerattack -attack publish -size 157286400 -bytes       # a device publishing 150 MiB
//	brokerattack -attack flood   -n 600 -size 262144          # a device publishing 600 results of 256 KiB
//	brokerattack -attack logins  -n 40 -count 160 -pid PID    # 160 wrong passwords for pi-1 over 40 sockets, a right login meanwhile
//	brokerattack -attack timing  -count 20                    # wrong passwords: an account that exists against one that does not
//	brokerattack -attack crowd   -n 300 -send 1               # 300 sockets sending one byte, reopened when closed; 20 right logins meanwhile
//	brokerattack -attack crowd   -n 200 -send 2 -sources 40   # a slowloris of half CONNECT headers from 40 addresses
//
// -sources K spreads the attacking sockets over K loopback addresses,
// 127.0.1.1 and up; the right logins come from 127.0.0.1.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"
)

func main() {
	attack := flag.String("attack", "claim", "claim, idle, publish, flood, logins, timing or crowd")
	addr := flag.String("broker", "127.0.0.1:1883", "the broker's address")
	n := flag.Int("n", 8, "connections (claim, idle) or messages (flood)")
	size := flag.Int("size", 256<<20-1, "bytes announced: CONNECT's (claim) or payload's (publish, flood)")
	send := flag.Bool("bytes", false, "send the bytes announced")
	slow := flag.Bool("slow", false, "send them a byte a second")
	hold := flag.Duration("hold", 15*time.Second, "how long to keep the sockets open")
	user := flag.String("user", "pi-1", "device account (publish, flood)")
	pass := flag.String("password", "one", "its password")
	client := flag.String("client-id", "edgebench-lab-pi-1", "its client id")
	topic := flag.String("topic", "edgebench/v1/lab/pi-1/result", "where it publishes")
	count := flag.Int("count", 160, "wrong logins in all (logins), of each kind (timing)")
	sources := flag.Int("sources", 1, "loopback addresses the attack comes from, 127.0.1.1 and up (logins, crowd)")
	target := flag.String("target", "pi-1", "the user the wrong passwords are for (logins)")
	pid := flag.Int("pid", 0, "the collector's pid: its CPU time during the attack is printed (logins)")
	sendN := flag.Int("send", 1, "bytes each socket sends: 1 (a CONNECT's type) or 2 (and an unfinished length) (crowd)")
	flag.Parse()
	switch *attack {
	case "logins":
		loginFlood(*addr, *n, *count, *sources, *target, *pid, *client, *user, *pass)
		return
	case "timing":
		loginTiming(*addr, *count, *target)
		return
	case "crowd":
		crowd(*addr, *n, *sources, *sendN, *hold, *client, *user, *pass)
		return
	}

	var closed atomic.Int64
	var wg sync.WaitGroup
	dial := func() net.Conn {
		c, err := net.Dial("tcp", *addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "brokerattack:", err)
			os.Exit(1)
		}
		return c
	}
	// watch counts a connection the server closes within hold.
	watch := func(c net.Conn, r io.Reader) {
		defer wg.Done()
		c.SetReadDeadline(time.Now().Add(*hold))
		_, err := io.Copy(io.Discard, r)
		if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
			closed.Add(1)
		}
		c.Close()
	}
	// write sends n zero bytes, when asked to.
	chunk := make([]byte, 64<<10)
	write := func(c net.Conn, n int) {
		if !*send {
			return
		}
		for n > 0 {
			k := min(n, len(chunk))
			if *slow {
				k = 1
			}
			if _, err := c.Write(chunk[:k]); err != nil {
				return
			}
			n -= k
			if *slow {
				time.Sleep(time.Second)
			}
		}
	}
	conns := 1
	switch *attack {
	case "claim", "idle":
		conns = *n
		for range *n {
			c := dial()
			if *attack == "claim" {
				c.Write(append([]byte{0x10}, varint(*size)...))
				go write(c, *size)
			}
			wg.Add(1)
			go watch(c, c)
		}
	case "publish", "flood":
		c := dial()
		r := bufio.NewReader(c)
		if err := login(c, r, *client, *user, *pass); err != nil {
			fmt.Fprintln(os.Stderr, "brokerattack: login:", err)
			os.Exit(1)
		}
		msgs := 1
		if *attack == "flood" {
			msgs = *n
		}
		wg.Add(1)
		go watch(c, r)
		for i := range msgs {
			hdr := append([]byte{0x32}, varint(2+len(*topic)+2+*size)...) // QoS 1
			hdr = append(hdr, byte(len(*topic)>>8), byte(len(*topic)))
			hdr = append(hdr, *topic...)
			hdr = append(hdr, byte((i+1)>>8), byte(i+1))
			if _, err := c.Write(hdr); err != nil {
				break
			}
			write(c, *size)
			if *attack == "flood" && !*send {
				break
			}
		}
	default:
		fmt.Fprintf(os.Stderr, "brokerattack: unknown attack %q\n", *attack)
		os.Exit(2)
	}
	wg.Wait()
	fmt.Printf("%s: %d of %d connections closed by the broker within %s\n", *attack, closed.Load(), conns, *hold)
}

// login sends a CONNECT and waits for a successful CONNACK.
func login(c net.Conn, r *bufio.Reader, client, user, pass string) error {
	pk := packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Connect}, ProtocolVersion: 4,
		Connect: packets.ConnectParams{ProtocolName: []byte("MQTT"), Clean: true, Keepalive: 60, ClientIdentifier: client,
			UsernameFlag: true, Username: []byte(user), PasswordFlag: true, Password: []byte(pass)}}
	var b bytes.Buffer
	if err := pk.ConnectEncode(&b); err != nil {
		return err
	}
	if _, err := c.Write(b.Bytes()); err != nil {
		return err
	}
	var ack [4]byte
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(r, ack[:]); err != nil {
		return err
	}
	if ack[0] != 0x20 || ack[3] != 0 {
		return fmt.Errorf("refused: % x", ack)
	}
	return nil
}

// varint is MQTT's remaining length.
func varint(n int) []byte {
	var b []byte
	for {
		x := byte(n % 128)
		n /= 128
		if n > 0 {
			x |= 0x80
		}
		b = append(b, x)
		if n == 0 {
			return b
		}
	}
}
