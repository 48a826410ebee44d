package probe

import (
	"fmt"
	"strconv"

	"github.com/edgebench/edgebench/probe/machine"
)

// throttleSinceBoot is the shift of the get_throttled word's bits that
// say "has happened since boot" (machine.ThrottleFlagsOf reads the state
// now, in the low bits).
const throttleSinceBoot = 16

// parseThrottled parses sys/devices/platform/soc/soc:firmware/get_throttled,
// a hexadecimal word with or without 0x ("50005").
func parseThrottled(b []byte) (machine.Throttle, error) {
	s := string(trimSpace(b))
	if len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X") {
		s = s[2:]
	}
	v, err := strconv.ParseUint(s, 16, 32)
	if err != nil {
		return machine.Throttle{}, fmt.Errorf("get_throttled: %w", err)
	}
	return decodeThrottled(uint32(v)), nil
}

func decodeThrottled(v uint32) machine.Throttle {
	return machine.Throttle{Raw: v, Now: machine.ThrottleFlagsOf(v), SinceBoot: machine.ThrottleFlagsOf(v >> throttleSinceBoot)}
}
