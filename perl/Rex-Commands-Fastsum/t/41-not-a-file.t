# Issue 51, 14: only a regular file has a digest. md5 dies with
# "File not found: PATH" for a directory or a missing path, always (stock
# Rex::Commands::MD5's rule), and checksums leaves such a path out of its
# hash, never answering with what lies under a directory, in particular a
# directory whose only file has the directory's own name (L/dd/dd), which
# the listing alone cannot tell from the file L/dd.
use v5.12.5;
use warnings;
use Test::More;
use File::Temp ();
use Digest::MD5 ();
use Digest::SHA ();
use lib 't/lib';
use TestHost qw(write_file);

my $host = TestHost->start;
my $d    = File::Temp->newdir;

write_file( "$d/L/dd/dd",              "inside\n" );
write_file( "$d/deep/dd/dd/dd",        "deeper\n" );          # dd/dd/dd: the name under it is dd/dd
write_file( "$d/-x y'z \$q/-x y'z \$q", "odd\n" );
write_file( "$d/nl\ndir/nl\ndir",      "newline\n" );
write_file( "$d/file",                 "a file\n" );
mkdir "$d/empty";
symlink( "$d/L/dd", "$d/link-to-dir" ) or die $!;
mkdir "$d/other";
symlink( "$d/L/dd", "$d/other/dd" ) or die $!;    # a link named dd to a directory holding only dd
symlink( "$d/file", "$d/link-to-file" ) or die $!;
symlink( "$d/nowhere", "$d/dangling" ) or die $!;
system( 'mkfifo', "$d/fifo" ) == 0 or die;

my %not_files = (
  'a directory whose only file has its name' => "$d/L/dd",
  'the same with a trailing /'               => "$d/L/dd/",
  'the same with /.'                         => "$d/L/dd/.",
  'a directory with dd/dd under it'          => "$d/deep/dd",
  'odd names'                                => "$d/-x y'z \$q",
  'a newline in the names'                   => "$d/nl\ndir",
  'an empty directory'                       => "$d/empty",
  'a symlink to a directory'                 => "$d/link-to-dir",
  'a symlink dd to a directory holding dd'   => "$d/other/dd",
  'a dangling symlink'                       => "$d/dangling",
  'a FIFO'                                   => "$d/fifo",
  'a missing path'                           => "$d/none",
  'a file with a trailing /'                 => "$d/file/",
  'the tree itself'                          => "$d",
);
my %files = ( 'a file' => "$d/file", 'a symlink to a file' => "$d/link-to-file", 'the file under L/dd' => "$d/L/dd/dd" );

# Perl's own quoting for the Rexfile: names as data.
sub lit { my ($s) = @_; $s =~ s/([\\'])/\\$1/g; return "'$s'" }
my @all  = ( values(%not_files), values(%files) );
my $list = join( ', ', map { lit($_) } @all );
my $body = "my \@all = ( $list );\n" . <<'BODY';
for my $algorithm (qw(md5 sha256)) {
  my $sums = checksums( [@all], algorithm => $algorithm );
  printf "SUM %s %s %s\n", $algorithm, unpack( 'H*', $_ ), $sums->{$_} for sort keys %$sums;
}
for my $i ( 0 .. $#all ) {
  my $got = eval { md5( $all[$i] ) };
  my $err = $@;
  $err =~ s/\n/\\n/g;
  printf "MD5 %s %s\n", unpack( 'H*', $all[$i] ), defined $got ? "DIGEST $got" : "DIED $err";
}
for my $path (@all) {
  my $sums = checksums( [$path] );
  printf "ONE %s %s\n", unpack( 'H*', $path ), join( ',', map { unpack( 'H*', $_ ) } keys %$sums );
}
my @loop = ( $all[0], $all[-1] );
for (@loop) { eval { md5($_) } }
print "LOOP ", ( grep { !defined || !length } @loop ) ? 'emptied' : 'intact', "\n";
BODY

my $with_fastsum = "$d/fastsum-bin";
mkdir $with_fastsum;
symlink( $ENV{FASTSUM}, "$with_fastsum/fastsum" ) or die $!;
for my $case ( [ 'coreutils' => [ '/usr/bin', '/bin' ] ], [ 'fastsum' => [ $with_fastsum, '/usr/bin', '/bin' ] ] ) {
  my ( $method, $path ) = @$case;
  my ( $status, $out ) = $host->run_rex( use => 'use Rex::Commands::Fastsum', path => $path, body => $body );
  is( $status, 0, "$method: rex ran" ) or diag($out);
  my ( %sum, %md5, %one );
  while ( $out =~ m/^(?:\e\[0m)?SUM (\w+) ([0-9a-f]*) ([0-9a-f]+)$/mg ) { $sum{$1}{ pack( 'H*', $2 ) } = $3 }
  while ( $out =~ m/^(?:\e\[0m)?MD5 ([0-9a-f]*) (.*)$/mg )             { $md5{ pack( 'H*', $1 ) } = $2 }
  while ( $out =~ m/^(?:\e\[0m)?ONE ([0-9a-f]*) ([0-9a-f,]*)$/mg )     { $one{ pack( 'H*', $1 ) } = $2 }
  for my $what ( sort keys %not_files ) {
    my $p = $not_files{$what};
    ok( !exists $sum{md5}{$p} && !exists $sum{sha256}{$p}, "$method, $what: checksums leaves it out" );
    is( $one{$p}, '', "$method, $what: alone, checksums gives an empty hash" );
    ( my $shown = $p ) =~ s/\n/\\n/g;
    like( $md5{$p} // '', qr/^DIED File not found: \Q$shown\E/, "$method, $what: md5 dies, File not found" );
  }
  for my $what ( sort keys %files ) {
    my $p = $files{$what};
    open( my $fh, '<:raw', $p ) or die $!;
    my $bytes = do { local $/; <$fh> };
    is( $sum{md5}{$p},    Digest::MD5::md5_hex($bytes),    "$method, $what: its MD5" );
    is( $sum{sha256}{$p}, Digest::SHA::sha256_hex($bytes), "$method, $what: its SHA-256" );
    is( $md5{$p}, 'DIGEST ' . Digest::MD5::md5_hex($bytes), "$method, $what: md5" );
  }
  is( scalar keys %{ $sum{md5} }, scalar keys %files, "$method: no other path has a digest" );
  like( $out, qr/^(?:\e\[0m)?LOOP intact$/m, "$method: md5 leaves the caller's \$_ alone" );
}

done_testing;
