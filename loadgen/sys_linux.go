//go:build linux

package loadgen

import (
	"syscall"
	"unsafe"
)

// The connections are non-blocking, so their reads and writes never block:
// they go to the kernel directly, without telling the Go scheduler, which
// would otherwise wake its monitor thread for every request.

func rawRead(fd int, b []byte) (int, error) {
	n, _, e := syscall.RawSyscall(syscall.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if e != 0 {
		return 0, errnoErr(e)
	}
	return int(n), nil
}

func rawWrite(fd int, b []byte) (int, error) {
	n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if e != 0 {
		return 0, errnoErr(e)
	}
	return int(n), nil
}

func rawClose(fd int) {
	syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(fd), 0, 0)
}

// errnoErr returns the common errors without allocating.
func errnoErr(e syscall.Errno) error {
	switch e {
	case syscall.EAGAIN:
		return syscall.EAGAIN
	case syscall.EINPROGRESS:
		return syscall.EINPROGRESS
	}
	return e
}

// sysEpollPwait2 is epoll_pwait2's number (Linux 5.11), the same on every
// architecture: it came after their tables were merged.
const sysEpollPwait2 = 441

// kernelTimespec is the kernel's struct __kernel_timespec, 64-bit fields
// on every architecture.
type kernelTimespec struct{ sec, nsec int64 }

// epollPwait2 waits at most ts for events; errno ENOSYS (a kernel before
// 5.11) or EPERM (a seccomp filter that does not know it) says it is not
// there.
func epollPwait2(epfd int, events []syscall.EpollEvent, ts *kernelTimespec) (int, syscall.Errno) {
	n, _, e := syscall.Syscall6(sysEpollPwait2, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)),
		uintptr(unsafe.Pointer(ts)), 0, 0)
	return int(n), e
}
