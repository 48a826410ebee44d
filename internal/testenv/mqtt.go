package testenv

import (
	"errors"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
)

// MQTTClient is a plain paho client connected to broker (tcp://host:port)
// with clientID, user and password, without reconnecting: for what a
// misbehaving device sends, and for watching what a broker lets through.
func MQTTClient(broker, clientID, user, password string) (paho.Client, error) {
	o := paho.NewClientOptions().AddBroker(broker).SetClientID(clientID).SetUsername(user).SetPassword(password).
		SetAutoReconnect(false).SetConnectRetry(false).SetConnectTimeout(5 * time.Second)
	c := paho.NewClient(o)
	tok := c.Connect()
	if !tok.WaitTimeout(10 * time.Second) {
		return nil, errors.New("connect: no answer")
	}
	if err := tok.Error(); err != nil {
		return nil, err
	}
	return c, nil
}
