package Rex::Commands::Fastsum::Tar;

# A tar stream written file by file (ustar headers, a pax record for a
# name or size ustar cannot hold), so that the files a sync sends go to the
# host in one upload. Only what the sync needs: regular files with a mode;
# owners are set by the host afterwards. Core Perl only.

use v5.12.5;
use warnings;

our $VERSION = '0.9.0';

sub new {
  my ( $class, $path ) = @_;
  open( my $fh, '>:raw', $path ) or die("$path: $!\n");
  return bless { fh => $fh, path => $path }, $class;
}

sub _octal {
  my ( $value, $width ) = @_;
  return sprintf( "%0*o\0", $width - 1, $value );
}

# A 512-byte header block.
sub _header {
  my (%h) = @_;
  my $block = pack( 'a100 a8 a8 a8 a12 a12 A8 a1 a100 a6 a2 a32 a32 a8 a8 a155 a12',
    $h{name}, _octal( $h{mode}, 8 ), _octal( 0, 8 ), _octal( 0, 8 ),
    _octal( $h{size}, 12 ), _octal( $h{mtime}, 12 ), ' ' x 8, $h{type}, '',
    "ustar\0", '00', '', '', '', '', $h{prefix} // '', '' );
  my $sum = unpack( '%32C*', $block );
  substr( $block, 148, 8 ) = sprintf( "%06o\0 ", $sum );
  return $block;
}

sub _write {
  my ( $self, $bytes ) = @_;
  print { $self->{fh} } $bytes or die("$self->{path}: $!\n");
}

sub _pad {
  my ( $self, $size ) = @_;
  my $rest = $size % 512;
  $self->_write( "\0" x ( 512 - $rest ) ) if $rest;
}

# One pax record: "LEN key=value\n", LEN counting itself.
sub _record {
  my ( $key, $value ) = @_;
  my $body = " $key=$value\n";
  my $len  = length($body);
  $len++ while length( $len . $body ) != $len;
  return $len . $body;
}

# Adds the bytes of $source (a path) or $content (a string) as $name.
sub add {
  my ( $self, $name, %file ) = @_;
  my $size =
    defined $file{content} ? length( $file{content} ) : -s $file{source};
  die("$file{source}: $!\n") unless defined $size;
  my $pax = '';
  $pax .= _record( 'path', $name ) if length($name) > 100;
  $pax .= _record( 'size', $size ) if $size > 8589934591;
  if ( length $pax ) {
    $self->_write( _header( name => 'PaxHeader/entry', mode => 0600,
      size => length($pax), mtime => $file{mtime}, type => 'x' ) );
    $self->_write($pax);
    $self->_pad( length $pax );
  }
  $self->_write( _header( name => substr( $name, 0, 100 ), mode => $file{mode},
    size => $size > 8589934591 ? 0 : $size, mtime => $file{mtime}, type => '0' ) );
  if ( defined $file{content} ) {
    $self->_write( $file{content} );
  }
  else {
    open( my $in, '<:raw', $file{source} ) or die("$file{source}: $!\n");
    my ( $buf, $done ) = ( '', 0 );
    while ( my $n = sysread( $in, $buf, 1 << 20 ) ) {
      $done += $n;
      die("$file{source}: it grew while it was sent\n") if $done > $size;
      $self->_write($buf);
    }
    die("$file{source}: $!\n") unless defined $done;
    die("$file{source}: it shrank while it was sent\n") if $done != $size;
    close($in);
  }
  $self->_pad($size);
}

sub close {
  my ($self) = @_;
  $self->_write( "\0" x 1024 );
  close( $self->{fh} ) or die("$self->{path}: $!\n");
}

1;
