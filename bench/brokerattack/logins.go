package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"
)

// source is the i-th of k attacking addresses, 127.0.1.1 and up: not
// the right logins' 127.0.0.1.
func source(i, k int) string {
	i %= max(k, 1)
	return fmt.Sprintf("127.0.%d.%d", 1+i/250, 1+i%250)
}

func dialFrom(from, addr string) (net.Conn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	return d.Dial("tcp", addr)
}

// tryLogin logs in from the address from: the CONNACK's return code
// (0: in) and how long it took from the CONNECT sent.
func tryLogin(from, addr, client, user, pass string) (byte, time.Duration, error) {
	c, err := dialFrom(from, addr)
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
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.ReadFull(bufio.NewReader(c), ack[:]); err != nil {
		return 0, time.Since(start), err
	}
	return ack[3], time.Since(start), nil
}

// cpuSeconds is a process's user and system time, from /proc.
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100 // USER_HZ
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/1e6) }

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// loginFlood sends count wrong passwords for target over n sockets at once
// (each reconnecting after its refusal) from k addresses, while the right
// account logs in from 127.0.0.1 every 100 ms.
func loginFlood(addr string, n, count, k int, target string, pid int, client, user, pass string) {
	code, idle, err := tryLogin("127.0.0.1", addr, client, user, pass)
	if err != nil || code != 0 {
		fmt.Fprintf(os.Stderr, "brokerattack: the right login before the flood: code %d, %v\n", code, err)
		os.Exit(1)
	}
	cpu0 := cpuSeconds(pid)
	start := time.Now()
	var next, fast atomic.Int64
	var done atomic.Bool
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			for next.Add(1) <= int64(count) {
				_, d, _ := tryLogin(source(i, k), addr, "x-"+strconv.Itoa(i), target, "wrong-"+strconv.Itoa(i))
				if d < 5*time.Millisecond {
					fast.Add(1)
				}
			}
		})
	}
	var during []time.Duration
	var refused int
	probe := make(chan struct{})
	go func() {
		defer close(probe)
		for !done.Load() {
			code, d, err := tryLogin("127.0.0.1", addr, client, user, pass)
			if err != nil || code != 0 {
				refused++
			} else {
				during = append(during, d)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	wg.Wait()
	wall := time.Since(start)
	cpu := cpuSeconds(pid) - cpu0
	done.Store(true)
	<-probe
	fmt.Printf("logins: %d wrong passwords for %s over %d sockets from %d addresses in %.2f s (%d refused within 5 ms); collector CPU %.2f s\n",
		count, target, n, k, wall.Seconds(), fast.Load(), cpu)
	fmt.Printf("logins: the right login of %s: %s idle; during the flood median %s, max %s over %d logins, %d refused\n",
		user, ms(idle), ms(median(during)), ms(slices.Max(append(during, 0))), len(during), refused)
}

// loginTiming times count wrong passwords for target, an account that
// exists, and count for names no account has, each from an address of
// its own, alternating.
func loginTiming(addr string, count int, target string) {
	var known, unknown []time.Duration
	for i := range count {
		_, d, err := tryLogin(fmt.Sprintf("127.0.2.%d", 1+i%250), addr, "x", target, "wrong")
		if err == nil {
			known = append(known, d)
		}
		_, d, err = tryLogin(fmt.Sprintf("127.0.3.%d", 1+i%250), addr, "x", "nobody-"+strconv.Itoa(i), "wrong")
		if err == nil {
			unknown = append(unknown, d)
		}
	}
	fmt.Printf("timing: a wrong password for %s: median %s (%d); for an unknown user: median %s (%d)\n",
		target, ms(median(known)), len(known), ms(median(unknown)), len(unknown))
}

// crowd keeps n sockets from k addresses in the broker's gate, each
// sending sendN bytes of a CONNECT and nothing more, reopened as soon as
// the broker closes them, while the right account logs in 20 times (up to
// 10 tries each, 200 ms apart).
func crowd(addr string, n, k, sendN int, hold time.Duration, client, user, pass string) {
	stop := make(chan struct{})
	var closed atomic.Int64
	var wg sync.WaitGroup
	bytes := []byte{0x10, 0xff}[:min(max(sendN, 1), 2)]
	for i := range n {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				c, err := dialFrom(source(i, k), addr)
				if err != nil {
					time.Sleep(10 * time.Millisecond)
					continue
				}
				c.Write(bytes)
				go func() { <-stop; c.Close() }()
				c.SetReadDeadline(time.Now().Add(hold))
				_, err = c.Read(make([]byte, 1))
				if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
					closed.Add(1)
				}
				c.Close()
			}
		})
	}
	time.Sleep(2 * time.Second)
	first, in, tries := 0, 0, 0
	var took []time.Duration
	for range 20 {
		start := time.Now()
		for try := range 10 {
			tries++
			code, _, err := tryLogin("127.0.0.1", addr, client, user, pass)
			if err == nil && code == 0 {
				if try == 0 {
					first++
				}
				in++
				took = append(took, time.Since(start))
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	close(stop)
	wg.Wait()
	fmt.Printf("crowd: %d sockets from %d addresses sending %d byte(s), reopened when closed (%d closed by the broker): "+
		"right logins in at the first try %d of 20, within 10 tries %d of 20 (%d tries; median time to get in %s)\n",
		n, k, len(bytes), closed.Load(), first, in, tries, ms(median(took)))
}
