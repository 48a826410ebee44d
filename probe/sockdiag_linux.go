package probe

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"os"

	"golang.org/x/sys/unix"
)

// listenInodes returns the inodes of the listening TCP sockets (IPv4 and
// IPv6) on port, asked of the kernel over NETLINK_SOCK_DIAG with a state
// filter. The kernel then walks only its listening table: reading
// /proc/net/tcp formats every socket, and with tens of thousands in
// TIME_WAIT (what a benchmark without keep-alive leaves behind) that costs
// over 100 ms of CPU on the machine under test. ss -ltn asks the same way.
func listenInodes(port int) (map[uint64]bool, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	defer unix.Close(fd)
	inodes := map[uint64]bool{}
	buf := make([]byte, 32<<10)
	for i, family := range []uint8{unix.AF_INET, unix.AF_INET6} {
		if err := sockDiagDump(fd, uint32(i+1), family, buf, func(sport uint16, inode uint32) {
			if int(sport) == port && inode != 0 {
				inodes[uint64(inode)] = true
			}
		}); err != nil {
			return nil, err
		}
	}
	return inodes, nil
}

// Sizes and offsets of linux/inet_diag.h's structures.
const (
	sizeofNlMsghdr     = 16
	sizeofInetDiagReq  = 56 // struct inet_diag_req_v2
	sizeofInetDiagMsg  = 72 // struct inet_diag_msg
	inetDiagMsgSport   = 4  // id.idiag_sport, big-endian
	inetDiagMsgInode   = 68 // idiag_inode
	nlmsgAlignTo       = 4
	tcpListenStateMask = 1 << tcpListen
)

// sockDiagDump sends one SOCK_DIAG_BY_FAMILY dump request for the listening
// TCP sockets of family and calls fn with each answer's local port and inode.
func sockDiagDump(fd int, seq uint32, family uint8, buf []byte, fn func(sport uint16, inode uint32)) error {
	return netlinkDump(fd, seq, inetDiagReq(family, tcpListenStateMask), buf, func(m []byte) {
		if len(m) >= sizeofInetDiagMsg {
			fn(binary.BigEndian.Uint16(m[inetDiagMsgSport:]), binary.NativeEndian.Uint32(m[inetDiagMsgInode:]))
		}
	})
}

// inetDiagReq is a dump request for the TCP sockets of family in the
// states of mask (bit n: state n).
func inetDiagReq(family uint8, states uint32) []byte {
	req := make([]byte, sizeofNlMsghdr+sizeofInetDiagReq)
	r := req[sizeofNlMsghdr:]
	r[0] = family
	r[1] = unix.IPPROTO_TCP
	binary.NativeEndian.PutUint32(r[4:], states)
	return req
}

// netlinkDump sends req (a SOCK_DIAG_BY_FAMILY request whose netlink
// header it fills) as a dump and calls fn with each answer's payload.
func netlinkDump(fd int, seq uint32, req []byte, buf []byte, fn func(m []byte)) error {
	ne := binary.NativeEndian
	ne.PutUint32(req[0:], uint32(len(req)))
	ne.PutUint16(req[4:], unix.SOCK_DIAG_BY_FAMILY)
	ne.PutUint16(req[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	ne.PutUint32(req[8:], seq)
	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return os.NewSyscallError("sendto", err)
	}
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return os.NewSyscallError("recvfrom", err)
		}
		b := buf[:n]
		for len(b) >= sizeofNlMsghdr {
			l := int(ne.Uint32(b[0:]))
			typ := ne.Uint16(b[4:])
			if l < sizeofNlMsghdr || l > len(b) {
				return fmt.Errorf("sock_diag: bad message length %d", l)
			}
			if ne.Uint32(b[8:]) == seq {
				switch typ {
				case unix.NLMSG_DONE:
					return nil
				case unix.NLMSG_ERROR:
					if l >= sizeofNlMsghdr+4 {
						if errno := int32(ne.Uint32(b[sizeofNlMsghdr:])); errno < 0 {
							return os.NewSyscallError("sock_diag", unix.Errno(-errno))
						}
					}
					return fmt.Errorf("sock_diag: error message")
				case unix.SOCK_DIAG_BY_FAMILY:
					fn(b[sizeofNlMsghdr:l])
				}
			}
			adv := (l + nlmsgAlignTo - 1) &^ (nlmsgAlignTo - 1)
			if adv > len(b) {
				break
			}
			b = b[adv:]
		}
	}
}

// tcpSock is a TCP socket as sock_diag gives it.
type tcpSock struct {
	src, dst netip.AddrPort
	state    uint8
	ino      uint64
}

// TCP states (include/net/tcp_states.h).
const tcpEstablished = 1

// Offsets of struct inet_diag_msg.
const (
	inetDiagMsgState = 1
	inetDiagMsgDport = 6
	inetDiagMsgSrc   = 8  // id.idiag_src, 16 bytes (IPv4: the first 4)
	inetDiagMsgDst   = 24 // id.idiag_dst
)

// tcpSockets lists the TCP sockets, IPv4 and IPv6, in the states of mask
// (bit n: state n), asked of the kernel over sock_diag; with ports, only
// those whose local or remote port is one of them (the kernel filters:
// under a load test of 5000 connections it formats and sends 10,000
// sockets otherwise, 20 ms of a busy x86 core).
func tcpSockets(states uint32, ports []uint16) ([]tcpSock, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	defer unix.Close(fd)
	var out []tcpSock
	buf := make([]byte, 32<<10)
	for i, family := range []uint8{unix.AF_INET, unix.AF_INET6} {
		req := inetDiagReq(family, states)
		if len(ports) > 0 {
			req = appendBytecode(req, portsFilter(ports))
		}
		err := netlinkDump(fd, uint32(i+1), req, buf, func(m []byte) {
			if len(m) < sizeofInetDiagMsg {
				return
			}
			addr := func(off int) netip.Addr {
				if m[0] == unix.AF_INET {
					return netip.AddrFrom4([4]byte(m[off : off+4]))
				}
				return netip.AddrFrom16([16]byte(m[off : off+16])).Unmap()
			}
			out = append(out, tcpSock{
				src:   netip.AddrPortFrom(addr(inetDiagMsgSrc), binary.BigEndian.Uint16(m[inetDiagMsgSport:])),
				dst:   netip.AddrPortFrom(addr(inetDiagMsgDst), binary.BigEndian.Uint16(m[inetDiagMsgDport:])),
				state: m[inetDiagMsgState],
				ino:   uint64(binary.NativeEndian.Uint32(m[inetDiagMsgInode:])),
			})
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// The inet_diag filter's operations (linux/inet_diag.h).
const (
	inetDiagReqBytecode = 1 // the request's attribute that holds a filter
	inetDiagBCJmp       = 1
	inetDiagBCSGE       = 2 // local port >= the next operation's no
	inetDiagBCSLE       = 3
	inetDiagBCDGE       = 4 // remote port >= the next operation's no
	inetDiagBCDLE       = 5
)

// portsFilter is an inet_diag filter that keeps the sockets whose local
// or remote port is one of ports: an "or" of equalities, each a >= and a
// <= comparison (the kernel's oldest operations), built as ss builds
// one, so that every operation lies on the chain of "yes" jumps the
// kernel's audit walks. An operation is {code, yes, no}: the comparison
// true jumps yes bytes, false no bytes; the end of the filter keeps the
// socket, 4 bytes past it drops it. Each test is
//
//	GE p {yes 8, no 20}  {0, 0, p}  LE p {yes 8, no 12}  {0, 0, p}  JMP {yes 4, no: to the end}
//
// where a false comparison jumps to the next test (or, from the last,
// which has no JMP, 4 bytes past the end) and a true pair reaches the
// JMP, whose jump is always its no: to the end, kept.
func portsFilter(ports []uint16) []byte {
	ne := binary.NativeEndian
	n := 2 * len(ports) // a local and a remote test per port
	size := 16*n + 4*(n-1)
	bc := make([]byte, size)
	op := func(off int, code uint8, yes uint8, no uint16) {
		bc[off], bc[off+1] = code, yes
		ne.PutUint16(bc[off+2:], no)
	}
	for i := range n {
		o := 20 * i
		ge, le := uint8(inetDiagBCSGE), uint8(inetDiagBCSLE)
		if i%2 == 1 {
			ge, le = inetDiagBCDGE, inetDiagBCDLE
		}
		p := ports[i/2]
		op(o, ge, 8, 20)
		op(o+4, 0, 0, p)
		op(o+8, le, 8, 12)
		op(o+12, 0, 0, p)
		if i < n-1 {
			op(o+16, inetDiagBCJmp, 4, uint16(size-(o+16)))
		}
	}
	return bc
}

// appendBytecode adds filter to a sock_diag request as its bytecode
// attribute.
func appendBytecode(req, filter []byte) []byte {
	attr := make([]byte, 4, 4+len(filter))
	binary.NativeEndian.PutUint16(attr[0:], uint16(4+len(filter)))
	binary.NativeEndian.PutUint16(attr[2:], inetDiagReqBytecode)
	return append(req, append(attr, filter...)...)
}

// unixSock is a connected or listening unix stream socket as sock_diag
// gives it.
type unixSock struct {
	ino, peer uint64
	// named: bound to a path or an abstract name, as a listener is and
	// the sockets it accepts are (they share its address); the side that
	// connected has none.
	named  bool
	name   string // the address when named (an abstract one begins with NUL)
	listen bool   // a listener; else connected
}

// Sizes and values of linux/unix_diag.h.
const (
	sizeofUnixDiagReq = 24 // struct unix_diag_req
	sizeofUnixDiagMsg = 16 // struct unix_diag_msg
	udiagShowName     = 0x01
	udiagShowPeer     = 0x04
	unixDiagName      = 0 // attribute: the socket's address
	unixDiagPeer      = 2 // attribute: the peer's inode
	sizeofRtattr      = 4
)

// unixStreams lists the connected and listening unix stream sockets,
// with their peers' inodes and their names, asked of the kernel over
// sock_diag (ss -x asks the same way).
func unixStreams() ([]unixSock, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	defer unix.Close(fd)
	ne := binary.NativeEndian
	req := make([]byte, sizeofNlMsghdr+sizeofUnixDiagReq)
	r := req[sizeofNlMsghdr:]
	r[0] = unix.AF_UNIX
	ne.PutUint32(r[4:], 1<<tcpEstablished|1<<tcpListen)
	ne.PutUint32(r[12:], udiagShowName|udiagShowPeer)
	var out []unixSock
	err = netlinkDump(fd, 1, req, make([]byte, 32<<10), func(m []byte) {
		if len(m) < sizeofUnixDiagMsg || m[1] != unix.SOCK_STREAM {
			return
		}
		s := unixSock{ino: uint64(ne.Uint32(m[4:])), listen: m[2] == tcpListen}
		for a := m[sizeofUnixDiagMsg:]; len(a) >= sizeofRtattr; {
			l := int(ne.Uint16(a[0:]))
			if l < sizeofRtattr || l > len(a) {
				break
			}
			switch ne.Uint16(a[2:]) {
			case unixDiagName:
				s.named = l > sizeofRtattr
				s.name = string(a[sizeofRtattr:l])
			case unixDiagPeer:
				if l >= sizeofRtattr+4 {
					s.peer = uint64(ne.Uint32(a[sizeofRtattr:]))
				}
			}
			adv := (l + nlmsgAlignTo - 1) &^ (nlmsgAlignTo - 1)
			if adv > len(a) {
				break
			}
			a = a[adv:]
		}
		out = append(out, s)
	})
	return out, err
}
