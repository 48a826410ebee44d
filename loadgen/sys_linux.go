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
