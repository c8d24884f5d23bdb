// Command preshutdown asks the edgecore service with the given process ID
// to go through a host shutdown, as an administrator rehearses one: it
// signals the event service.PreShutdownEventName(pid), which the service
// handles as the service manager's pre-shutdown. No client can send
// pre-shutdown through the service manager, on Windows as under Wine; the
// end-to-end test runs this in the Wine host instead.
//
//	preshutdown.exe PID
package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/kubeedge-windows/edgecore/windows/service"
	"github.com/kubeedge-windows/edgecore/windows/stackdump"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: preshutdown.exe PID (of the running edgecore service, as `edgecore.exe service status` shows it)")
		os.Exit(2)
	}
	pid, err := strconv.ParseUint(os.Args[1], 10, 32)
	if err != nil {
		fmt.Fprintf(os.Stderr, "preshutdown: PID %q: %v\n", os.Args[1], err)
		os.Exit(2)
	}
	name := service.PreShutdownEventName(uint32(pid))
	if err := stackdump.Signal(name); err != nil {
		fmt.Fprintf(os.Stderr, "preshutdown: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("signalled %s\n", name)
}
