package TestHost;

# A real OpenSSH server on 127.0.0.1 (a free port, its own host key, a
# generated user key, the sftp subsystem Rex uploads through), and a way
# to run Rex against it with a Rexfile. Stopped when the object goes.
# No other address is contacted.

use v5.12.5;
use warnings;
use File::Temp ();
use File::Spec ();
use Cwd qw(abs_path);
use IO::Socket::INET;
use Time::HiRes qw(sleep time);
use Exporter ();
our @ISA = ('Exporter');

our @EXPORT_OK = qw(run_rex write_file read_tree);

# What every test through a server needs beyond Perl's core. Without one,
# `use TestHost` skips the test file with the reason (as CPAN testers
# expect: a missing sshd is the machine's, not the module's, failure).
sub on_path {
  my ($program) = @_;
  for my $dir ( File::Spec->path ) {
    my $p = File::Spec->catfile( $dir, $program );
    return abs_path($p) if -f $p && -x _;
  }
  return;
}

my @SFTP_SERVERS = qw(/usr/lib/openssh/sftp-server /usr/libexec/openssh/sftp-server
  /usr/libexec/sftp-server /usr/lib/ssh/sftp-server);

sub sftp_server { ( grep { -x $_ } @SFTP_SERVERS )[0] }

sub missing {
  return 'Rex is not installed' if !eval { require Rex; 1 };
  return 'no rex program on PATH (it comes with Rex)' if !on_path('rex');
  for my $program (qw(sshd ssh ssh-keygen)) {
    next if on_path($program);
    return "no $program on PATH (OpenSSH's; sshd is often in /usr/sbin)";
  }
  return "no sftp-server (looked in @SFTP_SERVERS)" if !sftp_server();
  my $fastsum = $ENV{FASTSUM} // on_path('fastsum');
  return 'no fastsum program (set FASTSUM, or put fastsum on PATH)'
    if !defined $fastsum || !-x $fastsum;
  return;
}

sub import {
  if ( my $why = missing() ) {
    # scripts/tests/rex (CI) installs all of it: there a skip would hide
    # the whole suite, so it is a failure.
    die("$why (REX_FASTSUM_TESTS_REQUIRED is set)\n") if $ENV{REX_FASTSUM_TESTS_REQUIRED};
    require Test::More;
    Test::More::plan( skip_all => $why );
  }
  __PACKAGE__->export_to_level( 1, @_ );
}

my $here = abs_path( File::Spec->catdir( ( File::Spec->splitpath(__FILE__) )[1], '..', '..' ) );

sub _system {
  my (@cmd) = @_;
  system(@cmd) == 0 or die("@cmd: $?");
}

# %o: extra => lines added to sshd_config.
sub start {
  my ( $class, %o ) = @_;
  my $dir = File::Temp->newdir;
  for my $key (qw(host_key user_key)) {
    _system( 'ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-f', "$dir/$key" );
  }
  _system( 'cp', "$dir/user_key.pub", "$dir/authorized_keys" );
  mkdir '/run/sshd';
  for ( 1 .. 5 ) {
    my $port = IO::Socket::INET->new( Listen => 1, LocalAddr => '127.0.0.1:0' )->sockport;
    open( my $c, '>', "$dir/sshd_config" ) or die $!;
    print {$c} <<"CONF";
ListenAddress 127.0.0.1
Port $port
HostKey $dir/host_key
AuthorizedKeysFile $dir/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
StrictModes no
UsePAM no
PidFile $dir/sshd.pid
MaxStartups 1000
PerSourceMaxStartups none
MaxSessions 1000
Subsystem sftp @{[ sftp_server() ]}
@{[ $o{extra} // '' ]}
CONF
    close($c);
    my $pid = fork // die;
    if ( !$pid ) {
      open( STDERR, '>', "$dir/sshd.log" );
      # sshd re-executes itself, so it wants its absolute path.
      exec( on_path('sshd'), '-D', '-e', '-f', "$dir/sshd_config" ) or die;
    }
    my $until = time + 10;
    while ( time < $until ) {
      my $s = IO::Socket::INET->new( PeerAddr => "127.0.0.1:$port", Timeout => 1 );
      my $banner = '';
      if ( $s && sysread( $s, $banner, 4 ) && $banner eq 'SSH-' ) {
        open( my $k, '<', "$dir/host_key.pub" ) or die $!;
        my ( $kind, $key ) = split( ' ', scalar <$k> );
        open( my $kh, '>', "$dir/known_hosts" ) or die $!;
        print {$kh} "[127.0.0.1]:$port $kind $key\n";
        close($kh);
        return bless { dir => $dir, port => $port, pid => $pid }, $class;
      }
      last if waitpid( $pid, 1 ) == $pid;
      sleep 0.05;
    }
    kill 'TERM', $pid;
    waitpid( $pid, 0 );
  }
  die("sshd did not start");
}

sub port { $_[0]{port} }
sub dir  { "$_[0]{dir}" }

sub DESTROY {
  my ($self) = @_;
  if ( $self->{pid} ) {
    kill 'TERM', $self->{pid};
    waitpid( $self->{pid}, 0 );
  }
}

# Runs `rex -f REXFILE TASK` with a Rexfile that connects to this server
# by $connection (OpenSSH or SSH), uses $module, and has $body; returns
# (exit status, output).
sub run_rex {
  my ( $self, %o ) = @_;
  my $user = getpwuid($<);
  my $rexfile = File::Temp->new( SUFFIX => '.Rexfile', DIR => $self->dir );
  my $conn = $o{connection} // 'OpenSSH';
  my $path = $o{path} ? 'path ' . join( ', ', map {"'$_'"} @{ $o{path} } ) . ";\n" : '';
  print {$rexfile} <<"REX";
use Rex -feature => ['1.4'];
use lib '$here/lib';
$o{use};
set connection => '$conn';
user '$user';
private_key '$self->{dir}/user_key';
public_key '$self->{dir}/user_key.pub';
key_auth;
port $self->{port};
Rex::Config->set_openssh_opt( UserKnownHostsFile => '$self->{dir}/known_hosts', StrictHostKeyChecking => 'yes', LogLevel => 'ERROR' );
$path
group hosts => '127.0.0.1';
task 't', group => 'hosts', sub {
$o{body}
};
1;
REX
  close($rexfile);
  my $out = `cd $self->{dir} && rex @{[ $ENV{REX_FLAGS} // "" ]} -f $rexfile t 2>&1`;
  return ( $? >> 8, $out );
}

sub write_file {
  my ( $path, $content, $mode ) = @_;
  my $dir = $path =~ s{/[^/]*$}{}r;
  system( 'mkdir', '-p', $dir );
  open( my $fh, '>:raw', $path ) or die("$path: $!");
  print {$fh} $content;
  close($fh);
  chmod( $mode, $path ) if defined $mode;
}

# Every file under $root: relative name => [content, mode].
sub read_tree {
  my ($root) = @_;
  my %tree;
  my @dirs = ($root);
  while ( defined( my $dir = shift @dirs ) ) {
    opendir( my $dh, $dir ) or die("$dir: $!");
    for my $e ( grep { $_ ne '.' && $_ ne '..' } readdir($dh) ) {
      my $p = "$dir/$e";
      if ( -d $p ) { push @dirs, $p; next }
      open( my $fh, '<:raw', $p ) or die("$p: $!");
      my $c = do { local $/; <$fh> };
      $tree{ substr( $p, length($root) + 1 ) } = [ $c, sprintf( '%04o', ( stat $p )[2] & 07777 ) ];
    }
  }
  return \%tree;
}

1;
