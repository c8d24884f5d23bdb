// Package common holds the names and module descriptions shared by the bus
// and the modules that register on it.
package common

// Context types a module can ask for when it registers. Only the in-process
// channel context is implemented; the value of the socket type is kept because
// it is part of the wire vocabulary other components use.
const (
	MsgCtxTypeChannel = "channel"
	MsgCtxTypeUS      = "unixpacket"
)

// Resource and operation used when a module announces itself.
const (
	ResourceTypeModule  = "module"
	OperationTypeModule = "add"
)

// ModuleInfo describes a module to the bus context.
type ModuleInfo struct {
	ModuleName string
	ModuleType string
	ModuleSocket
}

// ModuleSocket carries the transport details of a remote module. In-process
// modules leave it empty.
type ModuleSocket struct {
	IsRemote   bool
	Connection interface{}
}
