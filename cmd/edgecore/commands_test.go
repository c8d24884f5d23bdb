package main

import "github.com/kubeedge-windows/edgecore/config"

// testHost is a Windows host as config.CurrentHost would read it, so that
// the commands' defaults are those an operator sees, on any build host.
var testHost = config.Host{GOOS: config.Windows, Hostname: "EDGE-1", NodeIP: "192.0.2.10",
	ProgramFiles: `C:\Program Files`, SystemDrive: "C:"}
