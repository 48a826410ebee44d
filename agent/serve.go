package agent

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/edgebench/edgebench/spool"
	"github.com/edgebench/edgebench/transport"
	"github.com/edgebench/edgebench/wire"
)

// Serve is the daemon: it connects to the broker (and keeps reconnecting),
// publishes the retained birth with its Last Will, tells systemd it is
// ready once connected and pings its watchdog, and runs commands until ctx
// ends (SIGTERM). Then it tells systemd it is stopping, cancels the run in
// progress, publishes it as cancelled (its result spooled first), publishes
// offline and disconnects.
func Serve(ctx context.Context, cfg *Config, opt Options, getenv func(string) string) error {
	a, err := New(cfg, opt)
	if err != nil {
		return err
	}
	log := a.log
	spool, err := spool.Open(cfg.Spool.Dir, spool.Limits{MaxCount: cfg.Spool.MaxCount, MaxBytes: int64(cfg.Spool.MaxBytes),
		OnTorn: func(name, reason string) {
			log.Warn("spool file set aside in torn/, never sent", zap.String("file", name), zap.String("reason", reason))
		}})
	if err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	notifier := NewNotifier(getenv)
	readied := make(chan struct{}, 1)
	client, err := transport.Dial(transport.ClientConfig{
		Broker: cfg.Broker.URL, Username: cfg.Broker.Username, Password: cfg.Broker.Password,
		CAFile: cfg.Broker.CAFile, CertFile: cfg.Broker.CertFile, KeyFile: cfg.Broker.KeyFile,
		Prefix: cfg.TopicPrefix, Fleet: cfg.Fleet, Device: cfg.DeviceID,
	}, transport.Options{
		Log:   log,
		Birth: a.Status(0),
		Spool: spool,
		OnConnect: func() {
			select {
			case readied <- struct{}{}:
			default:
			}
		},
	})
	if err != nil {
		return err
	}
	a.SetLink(client, client.WaitConnected)
	for _, dev := range []string{cfg.DeviceID, wire.AllDevices} {
		topic, err := client.Topics().Topic(cfg.Fleet, dev, wire.TopicCmd)
		if err == nil {
			err = client.Subscribe(topic, 1, a.HandlePayload)
		}
		if err != nil {
			client.Close()
			return err
		}
	}
	wd, err := WatchdogInterval(getenv)
	if err != nil {
		log.Warn("watchdog", zap.Error(err))
	}
	var dog *Watchdog
	if wd > 0 && notifier.Enabled() {
		dog = StartWatchdog(notifier, wd)
	}
	// READY=1 once the first connection is up, whenever that is.
	readyDone := make(chan struct{})
	go func() {
		defer close(readyDone)
		select {
		case <-readied:
			if err := notifier.Notify(NotifyReady); err != nil {
				log.Warn("sd_notify", zap.Error(err))
			}
		case <-ctx.Done():
		}
	}()
	log.Info("agent started", zap.String("device", cfg.DeviceID), zap.String("fleet", cfg.Fleet), zap.String("broker", cfg.Broker.URL))

	runErr := a.Run(withStopping(ctx, notifier, log))
	<-readyDone
	if dog != nil {
		if err := dog.Stop(); err != nil {
			log.Warn("watchdog", zap.Error(err))
		}
	}
	if err := client.Close(); err != nil {
		log.Warn("disconnect", zap.Error(err))
	}
	log.Info("agent stopped", zap.Int("spooled", spool.Stats().Count))
	return runErr
}

// withStopping returns a context that ends with ctx, after STOPPING=1 has
// been sent to systemd.
func withStopping(ctx context.Context, n *Notifier, log *zap.Logger) context.Context {
	out, cancel := context.WithCancel(context.Background())
	go func() {
		<-ctx.Done()
		if err := n.Notify(NotifyStopping); err != nil {
			log.Warn("sd_notify", zap.Error(err))
		}
		cancel()
	}()
	return out
}
