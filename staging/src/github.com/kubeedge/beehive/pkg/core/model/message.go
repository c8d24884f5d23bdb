// Package model defines the message every module exchanges over the bus and
// with the cloud. Field names and JSON keys are a wire format shared with
// deployed cloudcore instances: they must not change.
package model

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Operations a message can carry.
const (
	InsertOperation        = "insert"
	DeleteOperation        = "delete"
	QueryOperation         = "query"
	UpdateOperation        = "update"
	PatchOperation         = "patch"
	UploadOperation        = "upload"
	ResponseOperation      = "response"
	ResponseErrorOperation = "error"
	// UnholdUpgradeOperation releases pod updates held back on the node
	// (KubeEdge v1.22's hold-upgrade label): metamanager's metaserver
	// sends it to edged in the process, never over the wire.
	UnholdUpgradeOperation = "unhold-upgrade"
)

// Resource types understood by the edge and cloud modules.
const (
	ResourceTypePod                 = "pod"
	ResourceTypeEvent               = "event"
	ResourceTypeConfigmap           = "configmap"
	ResourceTypeServiceAccountToken = "serviceaccounttoken"
	ResourceTypeSecret              = "secret"
	ResourceTypeNode                = "node"
	ResourceTypePodlist             = "podlist"
	ResourceTypePodStatus           = "podstatus"
	ResourceTypePodPatch            = "podpatch"
	ResourceTypeNodeStatus          = "nodestatus"
	ResourceTypeNodePatch           = "nodepatch"
	ResourceTypeRule                = "rule"
	ResourceTypeRuleEndpoint        = "ruleendpoint"
	ResourceTypeRuleStatus          = "rulestatus"
	ResourceTypeLease               = "lease"
	ResourceTypeSaAccess            = "serviceaccountaccess"
	ResourceTypeCSR                 = "certificatesigningrequest"
	ResourceTypeK8sCA               = "k8s/ca.crt"
)

// Message is the unit of communication between modules and with the cloud.
type Message struct {
	Header  MessageHeader `json:"header"`
	Router  MessageRoute  `json:"route,omitempty"`
	Content interface{}   `json:"content"`
}

// MessageRoute says where a message comes from, where it goes and what it does.
type MessageRoute struct {
	Source      string `json:"source,omitempty"`
	Destination string `json:"destination,omitempty"`
	Group       string `json:"group,omitempty"`
	Operation   string `json:"operation,omitempty"`
	Resource    string `json:"resource,omitempty"`
}

// MessageHeader identifies a message and links a response to its request
// through ParentID.
type MessageHeader struct {
	ID              string `json:"msg_id"`
	ParentID        string `json:"parent_msg_id,omitempty"`
	Timestamp       int64  `json:"timestamp"`
	ResourceVersion string `json:"resourceversion,omitempty"`
	Sync            bool   `json:"sync,omitempty"`
	MessageType     string `json:"type,omitempty"`
}

// NewRawMessage returns the zero message.
func NewRawMessage() *Message {
	return &Message{}
}

// NewMessage returns a message with a fresh ID, the given parent and the
// current time in Unix milliseconds.
func NewMessage(parentID string) *Message {
	return &Message{Header: MessageHeader{
		ID:        uuid.New().String(),
		ParentID:  parentID,
		Timestamp: time.Now().UnixMilli(),
	}}
}

// NewErrorMessage answers m with an error text. Source and group stay empty
// so that the sender fills in who reports the error.
func NewErrorMessage(m *Message, errContent string) *Message {
	return NewMessage(m.Header.ID).
		SetResourceOperation(m.Router.Resource, ResponseErrorOperation).
		FillBody(errContent)
}

// BuildHeader sets the identifying header fields.
func (m *Message) BuildHeader(id, parentID string, timestamp int64) *Message {
	m.Header.ID = id
	m.Header.ParentID = parentID
	m.Header.Timestamp = timestamp
	return m
}

// BuildRouter sets the whole route except the destination.
func (m *Message) BuildRouter(source, group, resource, operation string) *Message {
	m.SetRoute(source, group)
	m.SetResourceOperation(resource, operation)
	return m
}

// SetRoute sets source and group.
func (m *Message) SetRoute(source, group string) *Message {
	m.Router.Source = source
	m.Router.Group = group
	return m
}

// SetResourceOperation sets resource and operation.
func (m *Message) SetResourceOperation(resource, operation string) *Message {
	m.Router.Resource = resource
	m.Router.Operation = operation
	return m
}

// SetDestination sets the destination module.
func (m *Message) SetDestination(dest string) *Message {
	m.Router.Destination = dest
	return m
}

// SetType sets the message type.
func (m *Message) SetType(t string) *Message {
	m.Header.MessageType = t
	return m
}

// SetResourceVersion sets the resource version the content was read at.
func (m *Message) SetResourceVersion(rv string) *Message {
	m.Header.ResourceVersion = rv
	return m
}

// FillBody sets the content.
func (m *Message) FillBody(content interface{}) *Message {
	m.Content = content
	return m
}

// UpdateID gives the message a new random ID.
func (m *Message) UpdateID() *Message {
	m.Header.ID = uuid.New().String()
	return m
}

// GetID returns the message ID.
func (m *Message) GetID() string { return m.Header.ID }

// GetParentID returns the ID of the message this one answers.
func (m *Message) GetParentID() string { return m.Header.ParentID }

// GetTimestamp returns the creation time in Unix milliseconds.
func (m *Message) GetTimestamp() int64 { return m.Header.Timestamp }

// GetSource returns the sending module.
func (m *Message) GetSource() string { return m.Router.Source }

// GetDestination returns the receiving module.
func (m *Message) GetDestination() string { return m.Router.Destination }

// GetGroup returns the group the message is routed to.
func (m *Message) GetGroup() string { return m.Router.Group }

// GetResource returns the resource the message is about.
func (m *Message) GetResource() string { return m.Router.Resource }

// GetOperation returns the operation on the resource.
func (m *Message) GetOperation() string { return m.Router.Operation }

// GetType returns the message type.
func (m *Message) GetType() string { return m.Header.MessageType }

// GetResourceVersion returns the resource version.
func (m *Message) GetResourceVersion() string { return m.Header.ResourceVersion }

// GetContent returns the content as stored.
func (m *Message) GetContent() interface{} { return m.Content }

// IsSync reports whether the sender waits for a response.
func (m *Message) IsSync() bool { return m.Header.Sync }

// IsEmpty reports whether m is the zero message.
func (m *Message) IsEmpty() bool {
	return m.Header == (MessageHeader{}) && m.Router == (MessageRoute{}) && m.Content == nil
}

// GetContentData returns the content as bytes: byte slices and strings as they
// are, anything else as JSON. The error text is upstream's word for word,
// because modules pass it on to their peers (metamanager sends it to the
// cloud and to edged); the cause stays wrapped for errors.Is and errors.As.
func (m *Message) GetContentData() ([]byte, error) {
	switch c := m.Content.(type) {
	case []byte:
		return c, nil
	case string:
		return []byte(c), nil
	default:
		data, err := json.Marshal(c)
		if err != nil {
			return nil, fmt.Errorf("marshal message content failed: %w", err)
		}
		return data, nil
	}
}

// Clone returns a copy of msg under a new ID with what upstream's clone
// keeps: parent ID, timestamp, source, group, resource, operation and
// content. Destination, resource version, type and the sync flag are left
// out as there: a clone is a new message, not a second sync request waiting
// for the same response.
func (m *Message) Clone(msg *Message) *Message {
	return NewRawMessage().
		BuildHeader(uuid.New().String(), msg.Header.ParentID, msg.Header.Timestamp).
		BuildRouter(msg.Router.Source, msg.Router.Group, msg.Router.Resource, msg.Router.Operation).
		FillBody(msg.Content)
}

// NewRespByMessage builds the response to msg carrying content.
func (m *Message) NewRespByMessage(msg *Message, content interface{}) *Message {
	return NewMessage(msg.Header.ID).
		SetRoute(msg.Router.Source, msg.Router.Group).
		SetResourceOperation(msg.Router.Resource, ResponseOperation).
		SetType(msg.Header.MessageType).
		FillBody(content)
}

// String describes the message on one line for logs, laid out as upstream's
// so that log searches written for upstream's edgecore find ours; the content
// is left out because it can be large or secret.
func (m *Message) String() string {
	return fmt.Sprintf("MessageID: %s ParentID: %s Group: %s Source: %s Destination: %s Resource: %s Operation: %s",
		m.Header.ID, m.Header.ParentID, m.Router.Group, m.Router.Source, m.Router.Destination,
		m.Router.Resource, m.Router.Operation)
}
