package probe

import "fmt"

// parseMilli parses a sysfs value in thousandths (thermal_zone*/temp in
// millidegrees C) or in kHz (scaling_cur_freq), returning it divided by 1000.
func parseMilli(b []byte) (float64, error) {
	v, ok := parseInt(trimSpace(b))
	if !ok {
		return 0, fmt.Errorf("bad value %q", trimSpace(b))
	}
	return float64(v) / 1000, nil
}
