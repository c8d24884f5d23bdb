package service

import "fmt"

// PreShutdownEventName is the event through which an administrator asks
// the edgecore service with process pid to go through a host shutdown
// without shutting the host down: signalled, the service handles it as
// the service manager's pre-shutdown (the node's pods are stopped by
// priority, then edgecore stops, and stays stopped until it is started
// again). No client may send pre-shutdown through the service manager, on
// Windows as under Wine: this is how the same path is rehearsed, and
// tested, on a running host. The event is open to SYSTEM and
// Administrators only (acl.EventSDDL), who may stop the service and the
// host anyway. Global\ puts it where every session sees it.
func PreShutdownEventName(pid uint32) string {
	return fmt.Sprintf(`Global\preshutdown-%d`, pid)
}
