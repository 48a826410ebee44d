// Package testenv sets up what the tests of several packages need, so that
// no test package carries its own copy: free loopback addresses
// (FreeAddr), the edgebench binaries built once per test process (Binary),
// an in-process MQTT broker that can restart (Broker), Debian's mosquitto
// and nginx on loopback, throwaway TLS certificates, system tools that
// skip the test when absent and fail it in CI (Tool), bounded waits on a
// condition (Until), test files (TempFile), a plain MQTT client
// (MQTTClient) and a TestMain that checks for goroutines left running
// (Main).
package testenv
