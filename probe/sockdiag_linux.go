package probe

import (
	"encoding/binary"
	"fmt"
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
	req := make([]byte, sizeofNlMsghdr+sizeofInetDiagReq)
	ne := binary.NativeEndian
	ne.PutUint32(req[0:], uint32(len(req)))
	ne.PutUint16(req[4:], unix.SOCK_DIAG_BY_FAMILY)
	ne.PutUint16(req[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	ne.PutUint32(req[8:], seq)
	r := req[sizeofNlMsghdr:]
	r[0] = family
	r[1] = unix.IPPROTO_TCP
	ne.PutUint32(r[4:], tcpListenStateMask)
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
					if m := b[sizeofNlMsghdr:l]; len(m) >= sizeofInetDiagMsg {
						fn(binary.BigEndian.Uint16(m[inetDiagMsgSport:]), ne.Uint32(m[inetDiagMsgInode:]))
					}
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
