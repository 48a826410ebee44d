package probe_test

import (
	"fmt"

	"github.com/edgebench/edgebench/probe"
)

// A probe pointed at a fixture tree of a Raspberry Pi 4. On the live machine
// use probe.New("/") and call Sample every interval.
func Example() {
	p := probe.New("testdata/pi4/t1")
	defer p.Close()
	p.SetWatches([]probe.Watch{probe.ParseWatch("nginx")})
	s, err := p.Sample() // the first sample: instantaneous figures only
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("memory total:", s.Mem.Total>>20, "MiB")
	fmt.Println("temperature:", s.Temps[0].Celsius, "C")
	fmt.Println("throttling now:", s.Throttle.Now)
	fmt.Println("nginx processes:", s.Procs[0].Count)
	fmt.Println("CPU shares before a second sample:", s.CPU)
	// Output:
	// memory total: 3793 MiB
	// temperature: 61.855 C
	// throttling now: under-voltage, throttled
	// nginx processes: 3
	// CPU shares before a second sample: <nil>
}
