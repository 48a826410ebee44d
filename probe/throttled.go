package probe

import (
	"fmt"
	"strconv"

	"github.com/edgebench/edgebench/probe/machine"
)

// The bits of the Raspberry Pi firmware's get_throttled word (vcgencmd
// get_throttled): the low bits are the state now, the same bits shifted by
// 16 are "has happened since boot".
const (
	throttleUnderVoltage  = 1 << 0
	throttleFreqCapped    = 1 << 1
	throttleThrottled     = 1 << 2
	throttleSoftTempLimit = 1 << 3
	throttleSinceBoot     = 16
)

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
	return machine.Throttle{Raw: v, Now: throttleFlags(v), SinceBoot: throttleFlags(v >> throttleSinceBoot)}
}

func throttleFlags(v uint32) machine.ThrottleFlags {
	return machine.ThrottleFlags{
		UnderVoltage:  v&throttleUnderVoltage != 0,
		FreqCapped:    v&throttleFreqCapped != 0,
		Throttled:     v&throttleThrottled != 0,
		SoftTempLimit: v&throttleSoftTempLimit != 0,
	}
}
