package cli_test

import (
	"fmt"
	"os"
	"time"

	"github.com/edgebench/edgebench/internal/cli"
)

func ExampleFlagSet_Parse() {
	fs := cli.NewFlagSet("run", "edgebench run [flags] URL", os.Stderr)
	c := fs.IntP("connections", "c", 10, "connections")
	d := fs.DurationP("duration", "d", 10*time.Second, "duration")
	timeout := fs.Duration("timeout", 2*time.Second, "per-request timeout")
	k := fs.BoolP("keepalive", "k", true, "keep-alive")
	rest, err := fs.Parse([]string{"-c500", "http://127.0.0.1/", "-d", "30", "-timeout=1s", "-k=false"})
	fmt.Println(*c, *d, *timeout, *k, rest, err)

	_, err = fs.Parse([]string{"--keep-alive", "http://127.0.0.1/"})
	fmt.Println(err)
	// Output:
	// 500 30s 1s false [http://127.0.0.1/] <nil>
	// unknown flag --keep-alive; did you mean --keepalive?
}
