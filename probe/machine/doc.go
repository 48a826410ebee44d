// Package machine holds what the probe saw of the machine, and prints it:
// a Sample (one interval's rates and instantaneous figures), the Summary
// of a measured window (mean and max of each figure), and the Report of a
// recording, whose WriteText is the "System" section of edgebench's
// reports. Figures the machine does not provide are absent (nil, empty),
// printed as "-", never as 0.
//
// It reads nothing: package probe fills these types from proc/ and sys/,
// and the collector rebuilds a Report's summary from what a device sent,
// without linking the sampler.
package machine
