// Package sesmail is the e-mail sender for Amazon SES (the v2 API). It is
// apart from package notify so that the functions that only write
// deliveries do not link the SES client.
package sesmail

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	sestypes "github.com/aws/aws-sdk-go-v2/service/sesv2/types"
	"github.com/aws/smithy-go"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/notify"
)

// SESAPI is the one Amazon SES v2 call the SES sender makes.
type SESAPI interface {
	SendEmail(ctx context.Context, in *sesv2.SendEmailInput, optFns ...func(*sesv2.Options)) (*sesv2.SendEmailOutput, error)
}

// SES sends e-mail with Amazon SES (v2 API), plain text and HTML: the
// rendering of notify.NewMail.
type SES struct {
	Client           SESAPI
	From             string
	To               []string
	ConfigurationSet string
}

// Send implements Sender. A reminder or an escalation notice reaches the
// delegates of the addresses too; if SES refuses that message as such (a
// delegate's address, which a reviewer chose: in the SES sandbox, one not
// verified), it is sent again to the target's own addresses alone, so
// that a delegate never costs the reviewers their notice.
func (s *SES) Send(ctx context.Context, n elicitation.Notice) error {
	to := n.AlsoTo(s.To)
	err := s.send(ctx, to, n)
	var se *notify.SendError
	if errors.As(err, &se) && se.Permanent && len(to) > len(s.To) {
		return s.send(ctx, s.To, n)
	}
	return err
}

func (s *SES) send(ctx context.Context, to []string, n elicitation.Notice) error {
	m := notify.NewMail(s.From, to, n)
	utf8 := aws.String("UTF-8")
	in := &sesv2.SendEmailInput{
		FromEmailAddress: aws.String(s.From),
		Destination:      &sestypes.Destination{ToAddresses: to},
		Content: &sestypes.EmailContent{Simple: &sestypes.Message{
			Subject: &sestypes.Content{Data: aws.String(m.Subject), Charset: utf8},
			Body: &sestypes.Body{
				Text: &sestypes.Content{Data: aws.String(m.Text), Charset: utf8},
				Html: &sestypes.Content{Data: aws.String(m.HTML), Charset: utf8},
			},
			Headers: []sestypes.MessageHeader{{Name: aws.String(notify.HeaderMailDelivery), Value: aws.String(m.DeliveryID)}},
		}},
	}
	if s.ConfigurationSet != "" {
		in.ConfigurationSetName = aws.String(s.ConfigurationSet)
	}
	_, err := s.Client.SendEmail(ctx, in)
	if err == nil {
		return nil
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch code := ae.ErrorCode(); code {
		case "TooManyRequestsException", "LimitExceededException", "InternalFailure", "ServiceUnavailable":
			return &notify.SendError{Reason: "SES " + code}
		default:
			return &notify.SendError{Reason: "SES " + code, Permanent: true}
		}
	}
	return notify.Reason(err)
}

// New is notify.Options.SES over client.
func New(client SESAPI) func(from string, to []string, configurationSet string) notify.Sender {
	return func(from string, to []string, configurationSet string) notify.Sender {
		return &SES{Client: client, From: from, To: to, ConfigurationSet: configurationSet}
	}
}

// FromConfig is notifypart.SES over cfg: SES clients built from it, in
// region when one is set. The caller loads the configuration: the local
// server with config.LoadDefaultConfig (cmd/elicitation), the notify
// function from the Lambda environment (lambdaconfig), so that this package
// links no credential chain.
func FromConfig(cfg aws.Config) func(ctx context.Context, region string) (func(from string, to []string, configurationSet string) notify.Sender, error) {
	return func(_ context.Context, region string) (func(from string, to []string, configurationSet string) notify.Sender, error) {
		c := cfg.Copy()
		if region != "" {
			c.Region = region
		}
		return New(sesv2.NewFromConfig(c)), nil
	}
}
