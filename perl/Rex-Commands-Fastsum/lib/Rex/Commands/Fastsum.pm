package Rex::Commands::Fastsum;

=head1 NAME

Rex::Commands::Fastsum - Rex's sync_up, sync_down and md5, answered by fastsum

=head1 SYNOPSIS

 use Rex::Commands::Fastsum;    # instead of Rex::Commands::Sync

 task "deploy", "web1", sub {
   sync_up "files/site", "/srv/site", {
     files       => { mode => 644 },
     directories => { mode => 755 },
     exclude     => [ '*.tmp' ],
     on_change   => sub { my @changed = @_; service nginx => "reload" },
   };
   my $sums = checksums( [ "/etc/passwd", "/etc/group" ], algorithm => "sha256" );
   say md5("/etc/hosts");
 };

=head1 DESCRIPTION

The same C<sync_up>, C<sync_down> (arguments, options and results as
L<Rex::Commands::Sync>) and C<md5> (as L<Rex::Commands::MD5>), with the
work done by the C<fastsum> program on the machine that runs Rex:

=over

=item * the host lists and hashes the whole tree in one command over the
connection Rex already has (its user, port, key, sudo and connection type),
by the first thing it has of: fastsum, GNU coreutils, BSD md5/shasum, Perl's
Digest::MD5, Python's hashlib;

=item * C<fastsum diff --plan> compares that listing with the local tree;

=item * the files that differ go over in one tar stream (where the host has
C<tar>; else one SFTP put each into a private temporary directory), then
one script on the host puts them in place: each file gets its owner and
mode under a temporary name beside where it goes, then is renamed into
place in one step, so a file in place is always whole and finished.

=back

=head2 Symlinks on the host: replaced, never followed

Nothing is ever written outside the target through a symlink. Where the
host has a symlink and the local tree has a directory or a file (at the
same path, or above it), the symlink itself is removed and a real
directory or file put in its place, as C<rsync -r> does; what the link
pointed at (inside or outside the target) is left untouched. Likewise a
file on the host where the local tree has a directory gives way to it.
Nothing else on the host is ever removed: a symlink or anything else where
the local tree has nothing stays. (Stock Rex::Commands::Sync writes
through such links, into whatever they point at.) The target C<$dest>
itself may be a symlink: it is what you named.

=head2 When a sync fails part way

A real directory on the host where the local tree has a file is not
removed: that file fails. A file that fails (that, or its owner or mode
cannot be set, or it cannot be moved into place) does not stop the
others. C<sync_up> then calls C<on_change> with the files that were put in
place (each finished: bytes, mode, owner) and dies naming each file that
failed and why. A file that failed was not put in place, so the next run
sees it as different again and tries it again: no change goes unreported
between runs.

Nothing is uploaded when the listing is incomplete or a file could not be
read: the task dies with the reason. File names travel as data: no name is
ever put into a shell command unquoted.

The C<fastsum> program is C<$ENV{FASTSUM}> or C<fastsum> on C<PATH>
(C<$Rex::Commands::Fastsum::FASTSUM> to set it in a Rexfile).

=cut

use v5.12.5;
use warnings;

our $VERSION = '0.9.0';

require Rex::Exporter;
use base qw(Rex::Exporter);
use vars qw(@EXPORT);

use Rex::Commands;
use Rex::Commands::File;
use Rex::Commands::Fs ();
use Rex::Helper::Path;
use Rex::Helper::Run;
use Rex::Interface::Fs;
use Text::Glob qw(glob_to_regex match_glob);
use JSON::PP ();
use MIME::Base64 ();
use Encode ();
use File::Temp ();
use File::Basename qw(basename dirname);
use File::Copy ();
use Digest::MD5 ();
use POSIX ();
use Rex::Commands::Fastsum::Tar;

@EXPORT = qw(sync_up sync_down md5 md5_many checksums);

our $FASTSUM = $ENV{FASTSUM} // 'fastsum';

# How the host hashed the last tree sync_up or sync_down listed
# (fastsum, coreutils, bsd, perl or python).
our $LAST_METHOD;

# The longest command sent to the host at once (Linux takes 128 KiB in
# one argument, and sshd passes the command as one).
my $COMMAND_LIMIT = 90 * 1024;

=head1 EXPORTED FUNCTIONS

=head2 sync_up($source, $dest, \%options)

Uploads the files of the local directory C<$source> (relative to the
Rexfile, as Rex::Commands::Sync resolves it) that the host's C<$dest> lacks
or holds other bytes of. Options as Rex::Commands::Sync's: C<files> and
C<directories> (C<owner>, C<group>, C<mode>), C<exclude> (globs; one with a
C</> matches the path, else the name), C<parse_templates> (C<*.tpl> files
are rendered with Rex's C<template> and sent without C<.tpl> when the
rendered bytes differ), C<on_change> (called with the remote paths that
were written). Nothing is deleted on the host but a symlink or a file
where the local tree needs a directory or a file ("Symlinks on the host"
above). Dies naming what failed ("When a sync fails part way").

=cut

sub sync_up {
  my ( $source, $dest, @option ) = @_;
  my $options = _options(@option);
  $options->{parse_templates} //= 1;
  $source = resolv_path($source);
  $dest   = resolv_path($dest);
  $source = get_file_path( $source, caller );
  die("$source : no such directory.") if !-d $source;

  my $plan = _plan( old => "rex:$dest", new => $source, remote => $dest, follow => 1 );
  my @excludes = _list( $options->{exclude} );
  my %remote_only =
    map { _name($_) => $_->{digest} // '' } @{ $plan->{only_old} };
  my @wanted;
  for my $entry ( @{ $plan->{send} }, @{ $plan->{moved} } ) {
    my $rel = _name( $entry, exists $entry->{to} ? 'to' : 'path' );
    next if grep { _excluded_up( "/$rel", $_ ) } @excludes;
    my $item = { rel => $rel, source => "$source/$rel" };
    if ( $options->{parse_templates} && $rel =~ m/\.tpl$/ ) {
      ( my $target = $rel ) =~ s/\.tpl$//;
      my $content = template("$source/$rel");
      $content = Encode::encode( 'UTF-8', $content ) if utf8::is_utf8($content);
      next if ( $remote_only{$target} // '' ) eq Digest::MD5::md5_hex($content);
      $item = { rel => $target, content => $content, source => "$source/$rel" };
    }
    push @wanted, $item;
  }
  return if !@wanted;
  _permissions( $_, $options, $source ) for @wanted;
  my ( $done, $failed ) = _send( $dest, \@wanted, $options );
  # What is in place is finished (owner, mode): on_change hears of it
  # even when other files failed, since the next listing will not.
  if ( @$done && ref( $options->{on_change} ) eq 'CODE' ) {
    $options->{on_change}->( map { "$dest/$_->{rel}" } @$done );
  }
  die("$failed\n") if defined $failed;
  return;
}

=head2 sync_down($source, $dest, \%options)

Downloads the files of the host's C<$source> that the local directory
C<$dest> lacks or holds other bytes of, with their modes; C<exclude>
(matched against names) and C<on_change> as Rex::Commands::Sync's.

The local side follows the same rules as the host's in C<sync_up>: a
symlink in C<$dest> is not followed when comparing (C<$dest> itself may be
one), and one where the host has a directory or a file is replaced, never
written through, as is a hard link (its other names keep their bytes);
each file is written under a temporary name beside its place, given its
mode and renamed in; a local directory where the host has a file fails
that file; a file that fails does not stop the others, and C<on_change>
hears of the files put in place before the task dies naming the failures.

=cut

sub sync_down {
  my ( $source, $dest, @option ) = @_;
  my $options = _options(@option);
  $source = resolv_path($source);
  $dest   = resolv_path($dest);
  die("$dest : no such directory.") if !-d $dest;

  my $plan = _plan( old => $dest, new => "rex:$source", remote => $source );
  my @excludes = map { glob_to_regex($_) } _list( $options->{exclude} );
  my @got;
  for my $entry ( @{ $plan->{send} }, @{ $plan->{moved} } ) {
    my $rel = _name( $entry, exists $entry->{to} ? 'to' : 'path' );
    next if grep { basename($rel) =~ $_ } @excludes;
    push @got, $rel;
  }
  return if !@got;
  my ( $done, $failed ) = _fetch( $source, $dest, \@got );
  if ( @$done && ref( $options->{on_change} ) eq 'CODE' ) {
    ( my $base = $dest ) =~ s{/$}{};
    $options->{on_change}->( map { "$base/$_" } @$done );
  }
  die("$failed\n") if defined $failed;
  return;
}

=head2 checksums(\@paths, algorithm => 'md5')

The digests of files on the current host (the local machine outside a
task's connection): a hash of path => hex digest. C<algorithm> is any
fastsum knows (md5, sha1, sha256, sha512, blake3 where the host has
fastsum, ...).

The rule: only a regular file (or a symlink to one) has a digest. A path
that is not one there (missing, a directory, a symlink to a directory or
to nothing, a device, a FIFO, a name with a trailing C</>) is B<left out
of the hash>, never an error, and never answered by what lies under it: a
directory is not hashed at all. A file that is there but could not be read
makes C<checksums> die with "Unable to get checksum of PATH: ...".

The host is asked twice (one more time for every ~90 KiB of quoted names):
once what each path is, once for the digests of the files among them, with
what each path is asked again after the digests; a path that stopped being
a file meanwhile is left out.

=head2 md5_many(@paths)

C<checksums(\@paths)>.

=head2 md5($path)

As Rex::Commands::MD5's: the MD5 of one file, hex; dies with
"File not found: PATH" when it is not a regular file there (missing, a
directory, anything C<checksums> leaves out), always, and with
"Unable to get MD5 checksum of PATH: ..." when it could not be read.

=cut

sub checksums {
  my ( $paths, %opt ) = @_;
  my $algorithm = $opt{algorithm} // 'md5';
  my ( %sums, @batch );
  my $size  = 0;
  my $flush = sub {
    return if !@batch;
    my @kinds = _kinds( \@batch );
    my @files = grep { $kinds[$_] eq 'f' } 0 .. $#batch;
    if (@files) {
      my @names = @batch[@files];
      my $nonce = _nonce();
      # The digests, then what each path is once they are taken.
      my $out = _host_run( _remote_command( \@names, $algorithm ) . '; '
          . _kinds_command( \@names, $nonce ) );
      my @after = _kinds_answer( $out, $nonce, scalar @names );
      die("Unable to get checksum of $names[0]: the host sent no answer\n") if !@after;
      $out =~ s/fastsum-kinds-\Q$nonce\E [fdom]*\r?\n?//g;
      my @parts = split( /^(?=fastsum-remote-text 1\r?$)/m, $out );
      shift @parts while @parts && $parts[0] !~ /^fastsum-remote-text/;
      for my $i ( 0 .. $#names ) {
        # A path that is no longer a file has no digest, whatever its
        # listing says (a directory lists what is under it).
        next if $after[$i] ne 'f';
        my ( $digest, $why ) = _one_sum( $names[$i], $parts[$i], $algorithm );
        $sums{ $names[$i] } = $digest if defined $digest;
        die("Unable to get checksum of $names[$i]: $why\n") if defined $why;
      }
    }
    @batch = ();
    $size  = 0;
  };
  # One command for all of them, as long as it fits in one argument: the
  # listing's command holds each name inside two levels of quotes (a
  # quote in a name costs ~40 bytes there), the check after it once more.
  for my $path (@$paths) {
    my $cost = length( _q( _q($path) ) ) * 3 + length( _q($path) ) + 2;
    $flush->() if @batch && $size + $cost > $COMMAND_LIMIT;
    push @batch, $path;
    $size += $cost;
  }
  $flush->();
  return \%sums;
}

sub md5_many { return checksums( [@_] ) }

sub md5 {
  my ($file) = @_;
  my $sums = eval { checksums( [$file] ) };
  if ( !$sums ) {
    ( my $why = $@ ) =~ s/^Unable to get checksum of \Q$file\E: //;
    chomp $why;
    die("Unable to get MD5 checksum of $file: $why");
  }
  return $sums->{$file} // die("File not found: $file");
}

# A word no file name or tool's message will hold by chance, to mark the
# lines a script on the host prints for us.
sub _nonce {
  return sprintf( '%x%x%x', $$, time, int( rand( 2**31 ) ) );
}

# The command that prints what each path is on the host, one letter each
# in order after "fastsum-kinds-NONCE ": f a regular file (or a link to
# one), d a directory (or a link to one), o something else there, m
# nothing (or a dangling link). Names are arguments, in single quotes.
sub _kinds_command {
  my ( $paths, $nonce ) = @_;
  my $script = q{printf '%s ' "fastsum-kinds-$0"; for p do }
    . q{if [ -f "$p" ]; then k=f; elif [ -d "$p" ]; then k=d; elif [ -e "$p" ]; then k=o; else k=m; fi; }
    . q{printf '%s' "$k"; done; printf '\n'};
  return 'sh -c ' . _q($script) . ' ' . _q($nonce) . ' ' . join( ' ', map { _q($_) } @$paths );
}

# The letters of a _kinds_command's answer in $out, or () when there is
# none of the right length.
sub _kinds_answer {
  my ( $out, $nonce, $count ) = @_;
  my ($letters) = $out =~ m/fastsum-kinds-\Q$nonce\E ([fdom]*)\r?$/m;
  return () if !defined $letters || length($letters) != $count;
  return split( //, $letters );
}

# What each of @$paths is on the host (see _kinds_command).
sub _kinds {
  my ($paths) = @_;
  my $nonce = _nonce();
  my @kinds = _kinds_answer( _host_run( _kinds_command( $paths, $nonce ) ), $nonce, scalar @$paths );
  die("Unable to get checksum of $paths->[0]: the host sent no answer\n") if !@kinds;
  return @kinds;
}

# -- the glue ----------------------------------------------------------

sub _options {
  my (@option) = @_;
  return ref( $option[0] ) ? { %{ $option[0] } } : {@option};
}

sub _list {
  my ($value) = @_;
  return ()       if !defined $value;
  return @$value  if ref($value) eq 'ARRAY';
  return ($value);
}

# Rex::Commands::Sync's rule: a glob with a / matches the path (with or
# without its leading /), one without matches the name.
sub _excluded_up {
  my ( $file, $glob ) = @_;
  local $Text::Glob::strict_wildcard_slash = 0;
  if ( $glob =~ m{/} ) {
    return match_glob( $glob, $file ) || match_glob( $glob, substr( $file, 1 ) );
  }
  return match_glob( $glob, basename($file) );
}

# A name from the plan, as bytes.
sub _name {
  my ( $entry, $key ) = @_;
  $key //= 'path';
  return MIME::Base64::decode_base64( $entry->{"${key}_base64"} )
    if defined $entry->{"${key}_base64"};
  return Encode::encode( 'UTF-8', $entry->{$key} );
}

# `'...'` for the host's sh: nothing inside single quotes is special.
sub _q {
  my ($text) = @_;
  $text =~ s/'/'\\''/g;
  return "'$text'";
}

# Runs fastsum here: (exit status, stdout, stderr). No shell is involved.
sub _fastsum {
  my (@args) = @_;
  my $err = File::Temp->new;
  my $pid = open( my $out, '-|' ) // die("fork: $!");
  if ( !$pid ) {
    open( STDERR, '>&', $err ) or POSIX::_exit(127);
    { no warnings 'exec'; exec {$FASTSUM} $FASTSUM, @args; }
    print STDERR "cannot run $FASTSUM: $!\n";
    POSIX::_exit(127);
  }
  binmode $out;
  my $stdout = do { local $/; <$out> } // '';
  close($out);
  my $status = $? >> 8;
  seek( $err, 0, 0 );
  my $stderr = do { local $/; <$err> } // '';
  return ( $status, $stdout, $stderr );
}

# The command that lists and hashes $path (or each of @$path, one listing
# after another) on the host, in text.
sub _remote_command {
  my ( $path, $algorithm ) = @_;
  my @method =
    $ENV{FASTSUM_REMOTE_METHOD} ? ( '--remote-method', $ENV{FASTSUM_REMOTE_METHOD} ) : ();
  my ( $status, $command, $err ) =
    _fastsum( 'remote-command', '--text', '-a', $algorithm, @method, '--',
    ref($path) ? @$path : $path );
  die("fastsum remote-command: $err") if $status;
  chomp $command;
  return $command;
}

# Runs a command on the current host over Rex's connection; its output.
sub _host_run {
  my ($command) = @_;
  # Rex's i_run assigns to $_: the caller's loop variable (an alias of
  # its array's element) would be emptied.
  local $_;
  my $out = i_run( $command, fail_ok => 1 );
  return $out // '';
}

# The listing of the host's $remote, compared by `fastsum diff --plan`.
sub _plan {
  my (%side) = @_;
  my $listing = File::Temp->new;
  binmode $listing;
  print {$listing} _host_run( _remote_command( $side{remote}, 'md5' ) );
  close($listing);
  # -L follows the local tree's symlinks: sync_up sends what they point
  # at (as stock Rex does); sync_down's local side is the target, whose
  # links are replaced, never followed.
  my ( $status, $out, $err ) = _fastsum( 'diff', '--plan', '-v', ( $side{follow} ? '-L' : () ),
    '--remote-listing', "$listing", '--', $side{old}, $side{new} );
  ($LAST_METHOD) = $err =~ m/hashed there by the (\w+) method/;
  my $plan = eval { JSON::PP->new->utf8->decode($out) };
  if ( $status > 1 || !$plan || !$plan->{complete} ) {
    die("$side{remote} : no such directory.")
      if $err =~ m/^fastsum diff: rex:\Q$side{remote}\E: No such file or directory$/m;
    my @why = map { _name($_) . ": $_->{error}" } @{ $plan->{problems} // [] };
    die( "fastsum: the listing of $side{remote} is incomplete, nothing was sent: "
        . join( '; ', @why, $err =~ s/\s+$//r ) );
  }
  return $plan;
}

# One file's digest from its text listing: (digest) or (undef, why) or ().
sub _one_sum {
  my ( $path, $part, $algorithm ) = @_;
  return ( undef, 'the host sent no answer' ) if !defined $part;
  my $listing = File::Temp->new;
  binmode $listing;
  print {$listing} $part;
  close($listing);
  my $empty = File::Temp->newdir;
  my ( $status, $out, $err ) = _fastsum( 'diff', '--plan', '-a', $algorithm,
    '--remote-listing', "$listing", '--', "rex:$path", "$empty" );
  my $plan = eval { JSON::PP->new->utf8->decode($out) };
  return () if !$plan && $err =~ m/^fastsum diff: rex:\Q$path\E: No such file or directory$/m;
  return ( undef, $err =~ s/\s+$//r ) if !$plan;
  return ( undef, join( '; ', map { $_->{error} } @{ $plan->{problems} } ) )
    if @{ $plan->{problems} };
  my @files = @{ $plan->{only_old} };
  # A directory lists what is under it: it is not a file.
  return () if @files != 1 || _name( $files[0] ) ne basename($path);
  return ( $files[0]{digest} );
}

# Each file's mode (Rex::Commands::Sync's rule: the local file's, or
# files => { mode }) and its directory's.
sub _permissions {
  my ( $item, $options, $source ) = @_;
  my @st = stat( $item->{source} );
  $item->{mode} = $options->{files}{mode} // sprintf( '%04o', $st[2] & 07777 );
  my @dir = stat( dirname( $item->{source} ) );
  $item->{dir_mode} = $options->{directories}{mode} // sprintf( '%04o', $dir[2] & 07777 );
  $item->{mtime} = $st[9];
}

# Sends the files: one tar stream where the host has tar, else one SFTP
# put each into a private temporary directory (ASCII names there: the
# real names travel inside the script); then one script makes the
# directories and puts each file in place (see _apply_script). Returns the
# items now in place and, when any could not be, why.
sub _send {
  my ( $dest, $items, $options ) = @_;
  my $answer = _host_run( q{d=$(mktemp -d "${TMPDIR:-/tmp}/fastsum-rex.XXXXXX") && }
      . q{if command -v tar >/dev/null 2>&1; then echo "fastsum-tmp tar $d"; else echo "fastsum-tmp each $d"; fi} );
  my ( $how, $tmp ) = $answer =~ m{fastsum-tmp (tar|each) (/[^\r\n]*)};
  die("fastsum: no temporary directory on the host: $answer") if !$tmp;
  my $fs = Rex::Interface::Fs->create;
  my @keep;
  if ( $how eq 'tar' ) {
    my $tar = File::Temp->new( SUFFIX => '.tar' );
    my $writer = Rex::Commands::Fastsum::Tar->new("$tar");
    my $n = 0;
    for my $item (@$items) {
      # Unpacked in the private directory under a name of ours, never
      # where it goes.
      $item->{put} = 'f' . $n++;
      $writer->add( $item->{put}, ( defined $item->{content} ? ( content => $item->{content} )
          : ( source => $item->{source} ) ), mode => 0600, mtime => time );
    }
    $writer->close;
    $fs->upload( "$tar", "$tmp/payload.tar" );
  }
  else {
    my $n = 0;
    for my $item (@$items) {
      my $local = $item->{source};
      if ( defined $item->{content} ) {
        my $t = File::Temp->new;
        binmode $t;
        print {$t} $item->{content};
        close($t);
        push @keep, $t;
        $local = "$t";
      }
      $item->{put} = 'f' . $n++;
      $fs->upload( $local, "$tmp/$item->{put}" );
    }
  }
  my $nonce  = _nonce();
  my $script = File::Temp->new( SUFFIX => '.sh' );
  binmode $script;
  print {$script} _apply_script( $dest, $tmp, $items, $options, $how eq 'tar', $nonce );
  close($script);
  $fs->upload( "$script", "$tmp/apply.sh" );
  my $out = _host_run( 'sh ' . _q("$tmp/apply.sh") . ' 2>&1; echo "fastsum-apply $?"' );
  my ($status) = $out =~ m/fastsum-apply (\d+)\s*$/;
  $out =~ s/fastsum-apply \d+\s*$//;
  my %done = map { $_ => 1 } $out =~ m/^fastsum-ok-\Q$nonce\E (\d+)\r?$/mg;
  my %failed = $out =~ m/^fastsum-failed-\Q$nonce\E (\d+) ([^\r\n]*)\r?$/mg;
  $out =~ s/^fastsum-(?:ok|failed)-\Q$nonce\E [^\r\n]*\r?\n?//mg;
  my @done = grep { $done{$_} } 0 .. $#$items;
  return ( [ @$items[@done] ] ) if defined $status && $status == 0 && @done == @$items;
  my @why = map {"$items->[$_]{rel}: $failed{$_}"} sort { $a <=> $b } keys %failed;
  my @rest = map { $items->[$_]{rel} } grep { !$done{$_} && !exists $failed{$_} } 0 .. $#$items;
  push @why, 'not put in place: ' . join( ', ', @rest[ 0 .. ( $#rest < 19 ? $#rest : 19 ) ] )
    . ( @rest > 20 ? ' and ' . ( @rest - 20 ) . ' more' : '' )
    if @rest;
  $out =~ s/\s+$//;
  push @why, "the host said: $out" if length $out;
  push @why, 'the connection ended before the host answered' if !defined $status;
  return ( [ @$items[@done] ], "fastsum: sending to $dest failed: " . join( '; ', @why ) );
}

# The script the host runs. Nothing is written through a symlink or
# outside $dest: each directory a file goes into is made a real directory
# (a symlink or a file there is removed first, as rsync does; the link's
# target is left alone); each file is moved from the private directory
# beside where it goes (a fresh name from mktemp in the same directory),
# given its owner and mode there, and renamed into place in one step,
# replacing a symlink (the link itself, never its target) or a file; a
# real directory where a file goes is left alone and named as a failure.
# A file that fails does not stop the others; the script prints which were
# put in place and which failed (with the nonce, by index), and exits 1 if
# any failed. So whatever is in place is finished, and whatever is not is
# still different for the next listing.
sub _apply_script {
  my ( $dest, $tmp, $items, $options, $tar, $nonce ) = @_;
  my $own = sub {
    my ( $kind, $path ) = @_;
    my @lines;
    # The owner first: a chown may clear set-id bits that chmod then sets.
    for my $what ( [ owner => 'chown' ], [ group => 'chgrp' ] ) {
      my $who = $options->{$kind}{ $what->[0] };
      push @lines, "$what->[1] " . _q($who) . " -- $path" if defined $who;
    }
    return @lines;
  };
  my @s = (
    'T=' . _q($tmp),
    q{trap 'rm -rf -- "$T"' EXIT},
    'N=' . _q($nonce),
    'cd -- ' . _q($dest) . ' || exit 1',
    'failed=0',
    # dir MODE PATH: PATH a real directory (made with MODE and the
    # directories' owner) or fail.
    'dir() {',
    '  if [ -L "$2" ] || { [ -e "$2" ] && [ ! -d "$2" ]; }; then rm -f -- "$2" || return 1; fi',
    '  if [ ! -d "$2" ] || [ -L "$2" ]; then',
    '    mkdir -- "$2" || return 1',
    map( {"    $_ || return 1"} $own->( 'directories', '"$2"' ) ),
    '    chmod "$1" -- "$2" || return 1',
    '  fi',
    '}',
    # put INDEX SOURCE MODE TEMPLATE PATH
    'put() {',
    '  if [ -d "$5" ] && [ ! -L "$5" ]; then',
    '    printf "fastsum-failed-%s %s %s\n" "$N" "$1" "the host has a directory there"; failed=1; return',
    '  fi',
    '  s=$(mktemp "$4") || { printf "fastsum-failed-%s %s %s\n" "$N" "$1" "no temporary file could be made beside it"; failed=1; return; }',
    '  if mv -f -- "$2" "$s" \\',
    map( {"    && $_ \\"} $own->( 'files', '"$s"' ) ),
    '    && chmod "$3" -- "$s" \\',
    '    && { [ ! -L "$5" ] || rm -f -- "$5"; } && { [ ! -d "$5" ] || [ -L "$5" ]; } \\',
    '    && mv -f -- "$s" "$5"; then',
    '    printf "fastsum-ok-%s %s\n" "$N" "$1"',
    '  else',
    '    rm -f -- "$s"',
    '    printf "fastsum-failed-%s %s %s\n" "$N" "$1" "it could not be put in place"; failed=1',
    '  fi',
    '}',
  );
  if ($tar) {
    push @s, 'mkdir -- "$T/x" && (cd -- "$T/x" && tar -xof "$T/payload.tar") || exit 1';
  }
  my %made;
  for my $item (@$items) {
    my @parts = split( m{/}, $item->{rel} );
    pop @parts;
    my $dir = '';
    for my $part (@parts) {
      $dir = length($dir) ? "$dir/$part" : $part;
      next if $made{$dir}++;
      push @s, 'dir ' . _q( $item->{dir_mode} ) . ' ' . _q("./$dir") . ' || { '
        . 'printf "%s\n" ' . _q("fastsum: the directory $dir could not be made") . '; exit 1; }';
    }
  }
  my $i = 0;
  for my $item (@$items) {
    my $where = $item->{rel} =~ m{^(.*)/} ? "./$1" : '.';
    push @s, join( ' ', 'put', $i++, _q( $tar ? "$tmp/x/$item->{put}" : "$tmp/$item->{put}" ),
      _q( $item->{mode} ), _q("$where/.fastsum-rex.XXXXXX"), _q("./$item->{rel}") );
  }
  return join( "\n", @s, 'exit $failed', '' );
}

# Fetches the files: one tar stream where the host's tar reads a list of
# NUL-separated names (GNU, bsdtar), with their directories' modes; else
# one SFTP get each (names as data, never through a shell).
sub _fetch {
  my ( $source, $dest, $rels ) = @_;
  my $tmp = _host_run( q{tar --version 2>/dev/null | grep -q -e GNU -e bsdtar && }
      . q{mktemp -d "${TMPDIR:-/tmp}/fastsum-rex.XXXXXX"} );
  $tmp =~ s/\s+$//;
  return _fetch_each( $source, $dest, $rels ) if $tmp !~ m{^/};
  my ( %dirs, @list );
  for my $rel (@$rels) {
    my @parts = split( m{/}, $rel );
    pop @parts;
    my $dir = '';
    for (@parts) {
      $dir = length($dir) ? "$dir/$_" : $_;
      push @list, $dir if !$dirs{$dir}++;
    }
    push @list, $rel;
  }
  my $names = File::Temp->new;
  binmode $names;
  print {$names} join( "\0", map {"./$_"} @list ), "\0";
  close($names);
  my $fs = Rex::Interface::Fs->create;
  $fs->upload( "$names", "$tmp/list" );
  my $out = _host_run( 'cd -- ' . _q($source) . ' && tar --null --no-recursion -cf '
      . _q("$tmp/out.tar") . ' -T ' . _q("$tmp/list") . ' 2>&1; echo "fastsum-tar $?"' );
  my ($status) = $out =~ m/fastsum-tar (\d+)\s*$/;
  my $tar = File::Temp->new( SUFFIX => '.tar' );
  eval { $fs->download( "$tmp/out.tar", "$tar" ) } if defined $status && $status == 0;
  _host_run( 'rm -rf -- ' . _q($tmp) );
  if ( !defined $status || $status != 0 || !-s "$tar" ) {
    $out =~ s/fastsum-tar \d+\s*$//;
    die("fastsum: fetching from $source failed: $out");
  }
  # Unpacked in a private directory first: only the regular files asked
  # for leave it, each put in place as _place_local says.
  my $x = File::Temp->newdir;
  system( 'tar', '-xpof', "$tar", '-C', "$x" ) == 0
    or die("fastsum: unpacking the files from $source failed: tar exited with $?");
  return _place_local(
    $dest, $rels,
    dir_mode => sub { my @st = lstat("$x/$_[0]"); return @st && -d _ ? $st[2] & 07777 : 0755 },
    fill     => sub {
      my ( $rel, $to ) = @_;
      # Read only through real directories of the private one.
      my $above = '';
      my @parts = split( m{/}, $rel );
      pop @parts;
      for (@parts) {
        $above .= "/$_";
        die("it was not in what the host sent\n") if !( lstat("$x$above") && -d _ );
      }
      my @st = lstat("$x/$rel");
      die("it was not in what the host sent\n") if !@st || !-f _;
      File::Copy::copy( "$x/$rel", $to ) or die("$!\n");
      return $st[2] & 07777;
    },
  );
}

sub _fetch_each {
  my ( $source, $dest, $rels ) = @_;
  my $fs = Rex::Interface::Fs->create;
  # SFTP takes names as UTF-8 text.
  my $remote = sub {
    my ($p) = @_;
    my $text = eval { Encode::decode( 'UTF-8', $p, Encode::FB_CROAK | Encode::LEAVE_SRC ) };
    return $text // $p;
  };
  return _place_local(
    $dest, $rels,
    dir_mode => sub {
      my %st = $fs->stat( $remote->("$source/$_[0]") );
      return oct( $st{mode} // '0755' );
    },
    fill => sub {
      my ( $rel, $to ) = @_;
      my %st = $fs->stat( $remote->("$source/$rel") );
      $fs->download( $remote->("$source/$rel"), $to );
      return defined $st{mode} ? oct( $st{mode} ) : 0644;
    },
  );
}

# Puts each file of @$rels in place under the local $dest, never through a
# symlink (the rules sync_up's script follows on the host): each directory
# above it is made a real one (a symlink or a file there gives way; mode
# from $how{dir_mode}->(REL)); the file is written by $how{fill}->(REL,
# TEMPORARY) (which returns its mode) under a temporary name in its own
# directory, given its mode, and renamed into place, replacing a symlink
# or a file; a real directory there is left alone and the file fails.
# Returns the names put in place and, if any failed, why.
sub _place_local {
  my ( $dest, $rels, %how ) = @_;
  my ( @done, @why, %ready );
  FILE: for my $rel (@$rels) {
    my @parts = split( m{/}, $rel );
    pop @parts;
    my $dir = '';
    for my $part (@parts) {
      $dir = length($dir) ? "$dir/$part" : $part;
      next if $ready{$dir};
      my $p = "$dest/$dir";
      if ( !( lstat($p) && -d _ ) ) {
        if ( lstat($p) && !unlink($p) ) { push @why, "$rel: $dir could not be removed: $!"; next FILE }
        if ( !mkdir($p) ) { push @why, "$rel: $dir could not be made: $!"; next FILE }
        chmod( $how{dir_mode}->($dir), $p );
      }
      $ready{$dir} = 1;
    }
    my $final = "$dest/$rel";
    if ( lstat($final) && -d _ ) { push @why, "$rel: there is a directory there"; next }
    my $tmp = eval {
      File::Temp->new( DIR => ( length($dir) ? "$dest/$dir" : $dest ), TEMPLATE => '.fastsum-rex.XXXXXX' );
    };
    if ( !$tmp ) { push @why, "$rel: no temporary file beside it: " . ( $@ =~ s/\s+$//r ); next }
    close($tmp);
    my $mode = eval { $how{fill}->( $rel, "$tmp" ) };
    if ( !defined $mode ) { push @why, "$rel: " . ( $@ =~ s/\s+$//r ); next }
    if ( !chmod( $mode, "$tmp" ) || ( lstat($final) && -d _ ) || !rename( "$tmp", $final ) ) {
      push @why, "$rel: it could not be put in place: $!";
      next;
    }
    $tmp->unlink_on_destroy(0);
    push @done, $rel;
  }
  return ( \@done ) if !@why;
  return ( \@done, "fastsum: fetching into $dest failed: " . join( '; ', @why ) );
}

1;

=head1 SEE ALSO

L<Rex::Commands::Sync>, L<Rex::Commands::MD5>, fastsum's docs/REMOTE.md
(the listing command and the plan, for any deploy tool).

=cut
