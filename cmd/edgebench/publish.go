package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/edgebench/edgebench/agent"
	"github.com/edgebench/edgebench/internal/cli"
	"github.com/edgebench/edgebench/internal/config"
	"github.com/edgebench/edgebench/spool"
	"github.com/edgebench/edgebench/transport"
	"github.com/edgebench/edgebench/wire"
)

// defaultAgentConfig is read, when it exists, for the broker settings that
// flags and environment leave unset.
const defaultAgentConfig = "/etc/edgebench/agent.yaml"

// publishFlags are the flags of `edgebench run --publish`: where to send
// the result. Each falls back to the agent's EDGEBENCH_* variable of the
// same setting (EDGEBENCH_BROKER_URL for --broker), then to the agent's
// config file, then to a default.
type publishFlags struct {
	publish     bool
	envPassword func() string // EDGEBENCH_BROKER_PASSWORD, read at publish time
	getenv      func(string) string

	broker, fleet, device, prefix string
	spool                         string
	username, password            string
	ca, cert, key                 string
	config                        string
	timeout                       time.Duration
}

// renamedEnv are the variables run --publish read before it took the
// agent's names, with the name that replaced each.
var renamedEnv = map[string]string{
	"EDGEBENCH_BROKER": "broker.url", "EDGEBENCH_DEVICE": "device_id", "EDGEBENCH_SPOOL": "spool.dir",
	"EDGEBENCH_USERNAME": "broker.username", "EDGEBENCH_PASSWORD": "broker.password", "EDGEBENCH_CA": "broker.ca_file",
	"EDGEBENCH_CERT": "broker.cert_file", "EDGEBENCH_KEY": "broker.key_file",
}

// addPublishFlags registers the publish flags on fs; getenv supplies the
// EDGEBENCH_* defaults shown in the usage: each the agent's variable of
// the setting (config.EnvName of its key).
func addPublishFlags(fs *cli.FlagSet, getenv func(string) string) *publishFlags {
	pf := &publishFlags{getenv: getenv}
	env := func(key string) string { return getenv(config.EnvName(key)) }
	fs.BoolVar(&pf.publish, "publish", false, "send the result to the collector through the broker (spooled until acknowledged)")
	fs.StringVar(&pf.broker, "broker", env("broker.url"), "broker URL, tcp:// or ssl:// / mqtts:// ($EDGEBENCH_BROKER_URL; default: the agent config's, else tcp://127.0.0.1:1883)")
	fs.StringVar(&pf.fleet, "fleet", env("fleet"), "fleet id ($EDGEBENCH_FLEET; default \"default\")")
	fs.StringVar(&pf.device, "device", env("device_id"), "device id ($EDGEBENCH_DEVICE_ID; default the hostname)")
	fs.StringVar(&pf.prefix, "topic-prefix", env("topic_prefix"), "MQTT topic prefix ($EDGEBENCH_TOPIC_PREFIX; default "+wire.DefaultPrefix+")")
	fs.StringVar(&pf.spool, "spool", env("spool.dir"), "spool directory ($EDGEBENCH_SPOOL_DIR; default /var/lib/edgebench/spool, or the user cache dir when that is not writable)")
	fs.StringVar(&pf.username, "username", env("broker.username"), "broker user name ($EDGEBENCH_BROKER_USERNAME)")
	fs.StringVar(&pf.password, "password", "", "broker password (better: $EDGEBENCH_BROKER_PASSWORD)")
	fs.StringVar(&pf.ca, "ca", env("broker.ca_file"), "PEM CA file of the broker's certificate ($EDGEBENCH_BROKER_CA_FILE)")
	fs.StringVar(&pf.cert, "cert", env("broker.cert_file"), "PEM client certificate ($EDGEBENCH_BROKER_CERT_FILE)")
	fs.StringVar(&pf.key, "key", env("broker.key_file"), "PEM client key ($EDGEBENCH_BROKER_KEY_FILE)")
	fs.StringVar(&pf.config, "agent-config", getenv(config.EnvName("config")), "agent config to take unset broker settings from (default "+defaultAgentConfig+" if present)")
	fs.DurationVar(&pf.timeout, "publish-timeout", 10*time.Second, "how long to wait for the collector's ack before leaving the result in the spool for later")
	// The password is read from the environment at publish time, so that
	// the usage never prints it.
	pf.envPassword = func() string { return env("broker.password") }
	return pf
}

// resolve fills what flags and environment left unset from the agent's
// config file and the defaults, and checks the result.
func (pf *publishFlags) resolve() error {
	for _, old := range slices.Sorted(maps.Keys(renamedEnv)) {
		if pf.getenv != nil && pf.getenv(old) != "" {
			return cli.Usagef("%s is now %s, the agent's name for it: rename the variable", old, config.EnvName(renamedEnv[old]))
		}
	}
	if pf.password == "" && pf.envPassword != nil {
		pf.password = pf.envPassword()
	}
	path, explicit := pf.config, pf.config != ""
	if !explicit {
		if _, err := os.Stat(defaultAgentConfig); err == nil {
			path = defaultAgentConfig
		}
	}
	if path != "" {
		// The file alone: the environment was applied above, by our names.
		cfg, err := agent.LoadConfig(path, func(string) string { return "" })
		switch {
		case err == nil:
			fill(&pf.broker, cfg.Broker.URL)
			fill(&pf.fleet, cfg.Fleet)
			fill(&pf.device, cfg.DeviceID)
			fill(&pf.prefix, cfg.TopicPrefix)
			fill(&pf.spool, cfg.Spool.Dir)
			fill(&pf.username, cfg.Broker.Username)
			fill(&pf.password, cfg.Broker.Password)
			fill(&pf.ca, cfg.Broker.CAFile)
			fill(&pf.cert, cfg.Broker.CertFile)
			fill(&pf.key, cfg.Broker.KeyFile)
		case explicit:
			return cli.Usagef("--agent-config: %v", err)
		}
	}
	fill(&pf.broker, "tcp://127.0.0.1:1883")
	fill(&pf.fleet, "default")
	fill(&pf.prefix, wire.DefaultPrefix)
	if pf.device == "" {
		h, err := os.Hostname()
		if err != nil {
			return cli.Usagef("--device not set and the hostname is unknown: %v", err)
		}
		pf.device = strings.ToLower(h)
	}
	if err := wire.ValidID(pf.fleet); err != nil {
		return cli.Usagef("--fleet: %v", err)
	}
	if err := wire.ValidID(pf.device); err != nil {
		return cli.Usagef("--device: %v (set --device or EDGEBENCH_DEVICE_ID)", err)
	}
	if pf.timeout <= 0 {
		return cli.Usagef("--publish-timeout must be > 0, got %v", pf.timeout)
	}
	if pf.spool == "" {
		dir, err := defaultSpoolDir()
		if err != nil {
			return err
		}
		pf.spool = dir
	}
	return nil
}

func fill(dst *string, v string) {
	if *dst == "" {
		*dst = v
	}
}

// defaultSpoolDir is the agent's spool when this user may write to it
// (the result then goes out with the agent's too), else one in the user's
// cache directory.
func defaultSpoolDir() (string, error) {
	const system = "/var/lib/edgebench/spool"
	if writableDir(system) {
		return system, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no spool directory: %s is not writable and %v (set --spool)", system, err)
	}
	return filepath.Join(cache, "edgebench", "spool"), nil
}

func writableDir(dir string) bool {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return false
	}
	f, err := os.CreateTemp(dir, ".probe-")
	if err != nil {
		return false
	}
	f.Close()
	os.Remove(f.Name())
	return true
}

// publishResult puts res in the spool, connects, publishes it and waits up
// to --publish-timeout for the collector's ack. It says on stderr what
// became of the result; a result not acknowledged in time stays spooled
// (with any older ones, which go out too) and is an error.
func publishResult(ctx context.Context, env *cli.Env, pf *publishFlags, res *wire.Result) error {
	if err := pf.resolve(); err != nil {
		return err
	}
	sp, err := spool.Open(pf.spool, spool.Limits{})
	if err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	cfg := transport.ClientConfig{
		Broker: pf.broker, Username: pf.username, Password: pf.password,
		CAFile: pf.ca, CertFile: pf.cert, KeyFile: pf.key,
		Prefix: pf.prefix, Fleet: pf.fleet, Device: pf.device,
		// Not the agent's client id: a second session under it would
		// push the agent off the broker. The collector's broker admits
		// this one for the device's account.
		ClientID:       transport.RunClientID(pf.fleet, pf.device),
		ConnectTimeout: min(pf.timeout, 10*time.Second),
		RetryInterval:  time.Second,
		MaxRetryWait:   2 * time.Second,
	}
	c, err := transport.Dial(cfg, transport.Options{Spool: sp})
	if err != nil {
		return cli.Usagef("publish: %v", err)
	}
	defer c.Close()
	res.Fleet, res.Device = pf.fleet, pf.device
	if err := c.PublishResult(ctx, res); err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	wctx, cancel := context.WithTimeout(ctx, pf.timeout)
	defer cancel()
	err = c.WaitAck(wctx, res.ID)
	if err == nil {
		fmt.Fprintf(env.Stderr, "published: result %s acknowledged by the collector (%s/%s via %s)\n", res.ID, pf.fleet, pf.device, pf.broker)
		if n := sp.Stats().Count; n > 0 {
			fmt.Fprintf(env.Stderr, "published: %d older results still in the spool %s\n", n, pf.spool)
		}
		return nil
	}
	if rej := (*transport.RejectedError)(nil); errors.As(err, &rej) {
		return fmt.Errorf("%v: set aside in %s", rej, filepath.Join(pf.spool, "rejected"))
	}
	why := "the collector did not acknowledge it"
	if !c.Connected() {
		why = "the broker " + pf.broker + " was not reachable"
		if cerr := c.ConnectError(); cerr != nil {
			why = cerr.Error() // "broker URL: the broker refused the login: not authorised", "broker URL: not reachable: ..."
		}
	}
	if errors.Is(err, context.Canceled) {
		why = "interrupted"
	}
	return fmt.Errorf("result %s not acknowledged within %v (%s): it stays in the spool %s and goes out with the next publish or the agent",
		res.ID, pf.timeout, why, pf.spool)
}
